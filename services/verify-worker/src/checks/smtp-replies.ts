/**
 * What one mail-server reply says: one table, read top to bottom, first match wins. The reply
 * code and its RFC 3463 enhanced status decide first; the text only when they say too little,
 * and then in several languages. Each rule names the evidence it read (`basis`), because the
 * evidence rule (evidence.ts) trusts a meaning read from words less than one read from codes.
 *
 * Decisions:
 * - 251 (will forward) is an acceptance: the server takes responsibility for delivery.
 * - 252 (cannot verify, will try) proves nothing about the mailbox: `inconclusive`.
 * - X.1.2 and "relaying denied" in any wording (`553 sorry, that domain isn't in my list of
 *   allowed rcpthosts`) say the host is not this domain's mail server: `not_this_host`.
 * - X.1.7 and X.1.8 refuse our envelope sender: a statement about the prober, not the mailbox.
 *   So do words that refuse the sender (`Sender address rejected`, `Sender verify failed`), read
 *   before any status: a server that checks our sender at RCPT time reports the status of that
 *   check (`5.1.0`, or the `5.1.1` our sender's domain gave it), not of the recipient.
 * - "Access denied", "policy", "not authorized" are not read as anything: large hosted-mail
 *   systems answer unknown recipients with `550 5.4.1 Recipient address rejected: Access denied`
 *   while others ban an IP with `550 5.7.606 Access denied, banned sending IP`. The enhanced code
 *   tells the ban; the evidence rule tells the unknown recipient.
 */
export type RcptClass =
  | 'accepted'
  | 'inconclusive'
  | 'rejected_unknown'
  | 'disabled'
  | 'full'
  | 'greylisted'
  | 'temporary'
  | 'blocked'
  | 'not_this_host'
  | 'unknown';

/** Which part of the reply a rule read: the basic code, the enhanced status, the text, or nothing. */
export type ReplyBasis = 'code' | 'enhanced' | 'text' | 'none';

/** A mail server's reply, as the SMTP prober (smtp/reply-parser.ts) hands it over. */
export interface SmtpReply {
  code: number;
  /** RFC 3463 enhanced status code (`5.1.1`), when the reply carries one whose class matches `code`. */
  enhanced?: string;
  /** Text of all lines, enhanced codes removed, control characters dropped, joined by one space. */
  text: string;
}

export interface ReplyMeaning {
  class: RcptClass;
  basis: ReplyBasis;
  /** The rule that matched (its `when`), for tests and documentation. */
  rule: string;
}

interface Rule {
  when: string;
  basis: ReplyBasis;
  test: (reply: SmtpReply) => boolean;
  class: RcptClass;
}

const codeIn =
  (...codes: number[]) =>
  (reply: SmtpReply) =>
    codes.includes(reply.code);
const enhanced = (pattern: RegExp) => (reply: SmtpReply) => reply.enhanced !== undefined && pattern.test(reply.enhanced);
/** 4xx: the condition may pass. */
export const isTransient = (reply: SmtpReply): boolean => reply.code >= 400 && reply.code < 500;
/** 5xx: the server means it. */
export const isPermanent = (reply: SmtpReply): boolean => reply.code >= 500 && reply.code < 600;
const permanentText = (pattern: RegExp) => (reply: SmtpReply) => isPermanent(reply) && pattern.test(reply.text);

const words = (...parts: string[]) => new RegExp(parts.join('|'), 'iu');

/** The server does not take mail for this domain (it is not the domain's mail server). */
const RELAY_DENIED = words(
  'relay(ing)?( to <[^>]*>)? (access )?(is )?(denied|disallowed|not (permitted|allowed|authori[sz]ed)|prohibited|refused)',
  '(unable|not (permitted|allowed|authori[sz]ed)) to relay',
  // An MX of the domain takes its mail from anyone; one that wants a login first is a submission host.
  '(smtp )?auth(entication)? (is )?required',
  'we do not relay',
  'rcpthosts',
  "(not|isn't|is not) in my list of allowed (recipient|rcpt) ?hosts",
  'not a local (domain|recipient)',
  'relais (non autorisé|refusé)',
  'relaying verweigert|kein relay',
);

/**
 * Texts that refuse our envelope sender, which some servers check only at RCPT (Exim's sender
 * verification, Postfix's sender restrictions), often under the status of the check they made
 * (`5.1.0`, or the `5.1.1` the sender's domain answered them).
 */
const SENDER_REFUSED = words(
  'sender (address )?(rejected|refused|invalid|unknown|not (found|allowed|accepted|valid))',
  'sender verif(y|ication) failed|verification failed for <|domain of sender|sender domain|envelope sender|badmailfrom',
  '(invalid|unknown|unverified) sender',
  'absender (abgelehnt|ungültig|unbekannt)|expéditeur (refusé|invalide|inconnu)|remitente (rechazado|inválido|desconocido)',
);

/** Texts that speak of the connecting client (our prober): blocklists, IP bans, reputation, reverse DNS. */
const ABOUT_THE_CLIENT = words(
  'spamhaus|spamcop|barracuda|sorbs|uceprotect|dnsbl|\\brbl\\b|block ?list|black ?list|listed (at|on|in)',
  '\\bbanned\\b|\\bblocked\\b|\\bspam\\b',
  'client host|sending ip|your ip|ip address|reverse dns|\\brdns\\b|\\bptr\\b|reputation',
  'blockiert|ihre ip|ip-adresse|schwarze liste',
  'bloqué|votre ip|adresse ip|liste noire',
  'bloquead|su ip|seu ip|dirección ip|endereço ip|lista negra',
  'bloccat|tuo ip|indirizzo ip|lista nera',
  'geblokkeerd|uw ip|ip-adres|zwarte lijst',
  'ваш(его)? ip|ip-адрес|черн(ый|ом) спис',
);

const DISABLED = words(
  'disabled|deactivated|inactive|suspended|no longer (active|in use)|account (is |has been )?closed',
  'deaktiviert|gesperrt|stillgelegt|nicht mehr aktiv',
  'désactivé|suspendu|inactif',
  'desactivad|desativad|suspendid|suspens|inactiv|inativ',
  'disattivat|disabilitat|sospes|inattiv',
  'gedeactiveerd|opgeschort',
  'отключ|деактивирован',
  'zablokowan|nieaktywn',
);

const FULL = words(
  'mailbox (is )?full|over ?quota|quota exceeded|exceeded (its |the )?quota|insufficient storage|exceeded storage|storage (allocation|limit) exceeded',
  'postfach (ist )?voll|speicher(platz)? (ist )?(voll|erschöpft|überschritten)|kontingent überschritten',
  'boîte (aux lettres |mail )?(est )?pleine|quota dépassé',
  'buzón (está )?lleno|cuota excedida|caixa (postal )?(está )?cheia|cota excedida',
  'casella (è )?piena|quota superata',
  'mailbox (is )?vol|quotum overschreden',
  'переполнен|превышен',
  'skrzynka (jest )?pełna',
  '已满|空间不足|容量超過|いっぱい',
);

const UNKNOWN_MAILBOX = words(
  'user unknown|unknown (user|recipient|mailbox|account|address|local part)|recipient unknown|no such (user|mailbox|recipient|address|account)',
  "(does ?n[o']t|not) exist|mailbox (is )?unavailable|(mailbox|recipient|user|address|account) not found|invalid (recipient|mailbox|address|user)",
  "unrouteable|no mailbox|not our customer|no longer exists|do(es)?n[o']?t have an? [\\w.-]+ account",
  'unbekannt|existiert nicht|gibt es nicht|nicht vorhanden|nicht gefunden|ungültige[rs]? (empfänger|adresse|postfach)',
  "inconnu|n'existe pas|introuvable|inexistant|adresse invalide",
  'no existe|desconocid|inexistente|não existe|desconhecid|no encontrad|não encontrad',
  'sconosciut|non esiste|non trovat|inesistent',
  'onbekend|bestaat niet|niet gevonden',
  'nie istnieje|nieznan|nie ma takiego|neexistuje|neznám',
  'ismeretlen|nem létezik|necunoscut|nu există|δεν υπάρχει|άγνωστ',
  'okänd|finns inte|ukendt|findes ikke|ukjent|finnes ikke|tuntematon',
  'bulunamadı|mevcut değil|bilinmeyen',
  'не существует|неизвестн|нет такого|не найден|не існує|невідом',
  '存在しません|存在しない|宛先不明|不存在|无此用户|無此用戶|존재하지 않',
);

export const RCPT_REPLY_TABLE: readonly Rule[] = [
  { when: '250: the server takes mail for this mailbox', basis: 'code', test: codeIn(250), class: 'accepted' },
  { when: '251: not local, the server will forward it', basis: 'code', test: codeIn(251), class: 'accepted' },
  { when: '252: cannot verify, will attempt delivery', basis: 'code', test: codeIn(252), class: 'inconclusive' },
  { when: 'X.2.2: mailbox full', basis: 'enhanced', test: enhanced(/^[45]\.2\.2$/), class: 'full' },
  { when: '4.7.x: greylisting or rate limiting', basis: 'enhanced', test: enhanced(/^4\.7\./), class: 'greylisted' },
  { when: '421, 450, 451: try again later', basis: 'code', test: codeIn(421, 450, 451), class: 'greylisted' },
  { when: 'any other 4xx: a temporary condition of the server', basis: 'code', test: isTransient, class: 'temporary' },
  { when: '5.1.7, 5.1.8: our envelope sender is refused', basis: 'enhanced', test: enhanced(/^5\.1\.[78]$/), class: 'blocked' },
  {
    when: '5xx whose text refuses our envelope sender (whatever status it carries)',
    basis: 'text',
    test: permanentText(SENDER_REFUSED),
    class: 'blocked',
  },
  {
    when: '5.1.1, 5.1.3, 5.1.6, 5.1.10: no such mailbox (unknown, bad syntax, moved, not found)',
    basis: 'enhanced',
    test: enhanced(/^5\.1\.(1|3|6|10)$/),
    class: 'rejected_unknown',
  },
  { when: '5.2.1: mailbox disabled', basis: 'enhanced', test: enhanced(/^5\.2\.1$/), class: 'disabled' },
  { when: '5.1.2: the server takes no mail for this domain', basis: 'enhanced', test: enhanced(/^5\.1\.2$/), class: 'not_this_host' },
  {
    when: '5xx saying relaying is denied: the host is not this domain’s mail server',
    basis: 'text',
    test: permanentText(RELAY_DENIED),
    class: 'not_this_host',
  },
  { when: '5.7.x: policy refusal of the client', basis: 'enhanced', test: enhanced(/^5\.7\./), class: 'blocked' },
  {
    when: '552 without enhanced status: storage exceeded',
    basis: 'code',
    test: (r) => r.code === 552 && r.enhanced === undefined,
    class: 'full',
  },
  { when: '5xx whose text speaks of the client', basis: 'text', test: permanentText(ABOUT_THE_CLIENT), class: 'blocked' },
  { when: '5xx whose text says the mailbox is disabled', basis: 'text', test: permanentText(DISABLED), class: 'disabled' },
  { when: '5xx whose text says the mailbox is full', basis: 'text', test: permanentText(FULL), class: 'full' },
  {
    when: '5xx whose text says the mailbox does not exist',
    basis: 'text',
    test: permanentText(UNKNOWN_MAILBOX),
    class: 'rejected_unknown',
  },
  // A bare 550 proves nothing by itself (servers use it for policy too); the evidence rule may.
  { when: 'any other 5xx: a refusal that does not say why', basis: 'none', test: isPermanent, class: 'unknown' },
];

const UNMATCHED: ReplyMeaning = { class: 'unknown', basis: 'none', rule: 'not a reply to RCPT' };

export function readRcptReply(reply: SmtpReply): ReplyMeaning {
  const rule = RCPT_REPLY_TABLE.find((candidate) => candidate.test(reply));
  return rule === undefined ? UNMATCHED : { class: rule.class, basis: rule.basis, rule: rule.when };
}

/**
 * A reply that ended the session before any RCPT was answered (greeting, EHLO, MAIL FROM, or a
 * 421 in place of a RCPT reply): it speaks of the prober or of the server's state, never of a
 * mailbox. 4xx: come back later. 5xx: this server refuses the prober.
 */
export function classifySessionReply(reply: SmtpReply): 'blocked' | 'greylisted' | 'unknown' {
  if (isTransient(reply)) return 'greylisted';
  if (isPermanent(reply)) return 'blocked';
  return 'unknown';
}
