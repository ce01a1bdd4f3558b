/**
 * Header rows of real contact exports and the column (from 0) that holds their addresses. One
 * table for both readers of an upload: the service's address-column rule
 * (libs/shared/lists/test/csv-columns.test.ts) and the console's preview of the same file
 * (clients/console/test/csv.test.ts), so the two are held to the same answers.
 */
export const EXPORTS: ReadonlyArray<readonly [source: string, header: readonly string[], addressAt: number]> = [
  [
    'Outlook',
    ['First Name', 'Last Name', 'Business Street', 'E-mail Address', 'E-mail Type', 'E-mail Display Name', 'E-mail 2 Address'],
    3,
  ],
  ['Google Contacts', ['Name', 'Given Name', 'E-mail 1 - Type', 'E-mail 1 - Value', 'Phone 1 - Type', 'Phone 1 - Value'], 3],
  ['Google Contacts (2024)', ['First Name', 'Last Name', 'Labels', 'E-mail 1 - Label', 'E-mail 1 - Value'], 4],
  ['HubSpot', ['Record ID', 'First Name', 'Last Name', 'Email', 'Email Domain', 'Contact owner', 'Marketing contact status'], 3],
  ['Mailchimp', ['Email Address', 'First Name', 'Last Name', 'Address', 'Phone Number', 'MEMBER_RATING', 'OPTIN_TIME'], 0],
  ['Salesforce', ['FirstName', 'LastName', 'MailingStreet', 'MailingCity', 'Email', 'HasOptedOutOfEmail'], 4],
  ['a CRM', ['Name', 'Company', 'Work Email', 'Personal email'], 2],
  ['German Outlook', ['Vorname', 'Nachname', 'E-Mail-Adresse', 'E-Mail-Typ'], 2],
  ['French', ['Nom', 'Prénom', 'Courriel'], 2],
  ['French Outlook', ['Prénom', 'Nom', 'Adresse de messagerie', 'Société'], 2],
  ['Spanish', ['Nombre', 'Correo electrónico'], 1],
  ['Turkish', ['Ad', 'Soyad', 'E-posta'], 2],
  ['Dutch', ['Naam', 'Emailadres'], 1],
  ['Swedish', ['Namn', 'E-post'], 1],
  ['Finnish', ['Nimi', 'Sähköposti'], 1],
  ['Italian', ['Nome', 'Indirizzo email'], 1],
  ['Russian', ['Имя', 'Электронная почта'], 1],
  ['Japanese', ['氏名', 'メールアドレス'], 1],
  ['camelCase', ['userId', 'emailAddress'], 1],
];
