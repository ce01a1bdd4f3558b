/**
 * Role accounts: mailboxes of a function, not a person. They do receive mail, so a role address
 * is not downgraded by itself; list cleaners read `checks.role` to decide.
 */
const ROLES = new Set([
  'abuse', 'accounting', 'accounts', 'admin', 'administrator', 'all', 'billing', 'careers', 'contact', 'contactus',
  'customercare', 'customerservice', 'devnull', 'dns', 'enquiries', 'enquiry', 'feedback', 'finance', 'ftp', 'hello',
  'help', 'helpdesk', 'hostmaster', 'hr', 'info', 'inquiries', 'inquiry', 'it', 'jobs', 'legal', 'list', 'mail',
  'mailerdaemon', 'marketing', 'media', 'news', 'newsletter', 'noc', 'noreply', 'noreplies', 'office', 'orders',
  'postmaster', 'press', 'privacy', 'recruiting', 'reply', 'root', 'sales', 'security', 'service', 'shop', 'spam',
  'staff', 'subscribe', 'support', 'sysadmin', 'team', 'tech', 'unsubscribe', 'usenet', 'uucp', 'webmaster', 'www',
]);

export function isRoleAccount(local: string): boolean {
  // Sub-addressing (`info+eu`) and separators (`no-reply`, `customer.service`) do not change the role.
  const base = local.toLowerCase().split('+')[0] ?? '';
  return ROLES.has(base) || ROLES.has(base.replace(/[._-]/g, ''));
}
