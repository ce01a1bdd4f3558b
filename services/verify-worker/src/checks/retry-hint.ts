/**
 * The delay a reply asks for before a retry, when its text states one: "try again in 300
 * seconds", "greylisted for 5 minutes", "please come back in 00:05:00", "retry after 60s".
 * Only a number tied to a word about retrying or waiting counts; nothing else is guessed.
 */
const UNIT_SECONDS: Array<[RegExp, number]> = [
  [/^(s|secs?|seconds?|sekunden?|secondes?|segundos?|secondi)$/i, 1],
  [/^(m|mins?|minutes?|minuten?|minutos?|minuti)$/i, 60],
  [/^(h|hrs?|hours?|stunden?|heures?|horas?|ore)$/i, 3_600],
];
const RETRY_WORD = String.raw`(?:try|retry|again|come back|wait|greylist\w*|graylist\w*|defer\w*|delay\w*|versuch\w*|réessay\w*|intent\w*|riprov\w*)`;
const AMOUNT = new RegExp(String.raw`${RETRY_WORD}\D{0,24}?\b(\d{1,6})\s*([a-zé]+)\b`, 'iu');
const CLOCK = new RegExp(String.raw`${RETRY_WORD}\D{0,24}?\b(\d{1,2}):(\d{2}):(\d{2})\b`, 'iu');
/** Longer than a day is not a retry hint but a refusal. */
const MAX_SECONDS = 86_400;

export function retryAfterSeconds(text: string): number | undefined {
  const clock = CLOCK.exec(text);
  if (clock !== null) return bounded(Number(clock[1]) * 3_600 + Number(clock[2]) * 60 + Number(clock[3]));
  const amount = AMOUNT.exec(text);
  if (amount === null) return undefined;
  const unit = UNIT_SECONDS.find(([pattern]) => pattern.test(amount[2] ?? ''));
  return unit === undefined ? undefined : bounded(Number(amount[1]) * unit[1]);
}

const bounded = (seconds: number) => (seconds > 0 && seconds <= MAX_SECONDS ? seconds : undefined);
