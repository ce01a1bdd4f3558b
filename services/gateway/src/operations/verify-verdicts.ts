/** What both verify operations' documentation says of a result, in short. */
export const VERDICTS_IN_SHORT =
  'Each result has a verdict (`deliverable` only when the mail server accepted that exact mailbox on a domain that is neither ' +
  'catch-all nor disposable; `undeliverable` only on proof; anything uncertain `risky`), a score 0-100, one reason code and the ' +
  'checks made (`null` for a check not made).';
