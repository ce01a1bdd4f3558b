/**
 * The address column of real-shaped exports (docs/lists.md, "The address column"): the header
 * rows of Outlook, Google Contacts, HubSpot, Mailchimp, Salesforce and others, headers in other
 * languages, a `Contact` column taken only when it holds addresses, content when no header says,
 * `?column=` by name and by index, and a file with no address column refused.
 */
import { describe, expect, it } from 'vitest';
import { EXPORTS } from '@svc/testkit/csv-exports';
import { chooseColumn, detectColumn, headerKind, looksLikeAddress } from '../src/csv-columns.ts';

/** A row of `width` cells with `address` in column `at` and names elsewhere. */
const row = (width: number, at: number, address: string): string[] =>
  Array.from({ length: width }, (_, i) => (i === at ? address : `cell ${i}`));

describe('the address column', () => {
  it.each(EXPORTS)('%s: by its header', (_source, header, addressAt) => {
    const sample = Array.from({ length: 5 }, (_, i) => row(header.length, addressAt, `person${i}@example.com`));
    expect(chooseColumn([...header], sample)).toMatchObject({ index: addressAt, header: true });
    expect(detectColumn([...header], sample)).toMatchObject({ index: addressAt, by: 'header' });
  });

  it('knows headers that hold an address from those about one', () => {
    for (const header of [
      'Email',
      'E-Mail',
      'e-mail 2 address',
      'EMAIL_ADDRESS',
      'Primary Email',
      'Mail',
      'E-Mail-Adresse',
      'Correo',
      'Adresse de messagerie',
    ])
      expect(headerKind(header), header).toBe('strong');
    for (const header of ['Email Type', 'E-mail Display Name', 'Email Opt In', 'Email Domain', 'Voicemail', 'Mailing Street', 'Gmail ID'])
      expect(headerKind(header), header).not.toBe('strong');
    for (const header of ['Contact', 'Address', 'Recipient', 'Login']) expect(headerKind(header), header).toBe('maybe');
  });

  it('takes a `Contact` column only when its cells look like addresses', () => {
    const header = ['Name', 'Company', 'Contact'];
    const sample = [
      ['Ann', 'Acme', 'ann@acme.example'],
      ['Bob', 'Bolt', ''],
      ['Cy', 'Cog', 'cy@cog.example'],
    ];
    expect(chooseColumn(header, sample)).toMatchObject({ index: 2, header: true });
    expect(() => chooseColumn(header, [['Ann', 'Acme', '+49 30 1234']])).toThrow(/No column of this file holds e-mail addresses/);
  });

  it('prefers, of several address headers, the one with the addresses; of a postal `Address` and an e-mail column, the e-mail', () => {
    const header = ['Email', 'Secondary Email'];
    expect(
      chooseColumn(header, [
        ['', 'a@x.example'],
        ['', 'b@x.example'],
      ]),
    ).toMatchObject({ index: 1, header: true });
    expect(chooseColumn(['Name', 'Address', 'Reach me at'], [['Ann', '1 Main St', 'ann@x.example']])).toMatchObject({
      index: 2,
      header: true,
    });
    // A column named Email but empty throughout gives way to the one that holds the addresses.
    expect(chooseColumn(['Name', 'Email', 'Contact'], [['Ann', '', 'ann@x.example']])).toMatchObject({ index: 2 });
    expect(chooseColumn(['Name', 'Email', 'Phone'], [['Ann', '', '123']])).toMatchObject({ index: 1 });
  });

  it('finds the column by content without a header naming it, or without a header row', () => {
    const sample = Array.from({ length: 20 }, (_, i) => [`Person ${i}`, `+1 555 01${i}`, i % 4 === 0 ? 'not given' : `p${i}@mail.example`]);
    expect(chooseColumn(['Who', 'Phone', 'Reach'], sample)).toMatchObject({ index: 2, header: true });
    expect(chooseColumn(['Ann', '+1 555', 'ann@mail.example'], sample)).toMatchObject({ index: 2, header: false });
  });

  it('takes `?column=` by header in any case or by 1-based index; refuses what names no column', () => {
    const header = ['Name', 'Email', 'Backup'];
    expect(chooseColumn(header, [], 'backup')).toMatchObject({ index: 2, header: true });
    expect(chooseColumn(header, [], '3')).toMatchObject({ index: 2, header: true });
    expect(chooseColumn(['a@x.example', 'b@x.example'], [], '2')).toMatchObject({ index: 1, header: false });
    expect(() => chooseColumn(header, [], 'Phone')).toThrow(
      /No column is headed "Phone". The header row has: 1 "Name", 2 "Email", 3 "Backup"/,
    );
    expect(() => chooseColumn(header, [], '4')).toThrow(/column 4 is out of range: this file has 3 columns/);
    expect(() => chooseColumn(header, [], '0')).toThrow(/out of range/);
  });

  it("finds the header below a note, as LinkedIn's export writes it, and keeps the note as rows", () => {
    const note = ['When exporting your connection data, you may notice that some of the email addresses are missing.'];
    const header = ['First Name', 'Last Name', 'URL', 'Email Address', 'Company'];
    const data = [['Ann', 'Lee', 'https://www.linkedin.com/in/annlee', 'ann@x.example', 'Acme']];
    expect(chooseColumn(['Notes:'], [note, header, ...data])).toEqual({ index: 3, header: true, preamble: 2 });
    // A data row that mentions e-mail is no header.
    expect(chooseColumn(['Email', 'Notes'], [['a@x.example', 'prefers email, not phone']])).toEqual({
      index: 0,
      header: true,
      preamble: 0,
    });
  });

  it('refuses a file with no address column, saying what its header has', () => {
    expect(() => chooseColumn(['Name', 'Phone'], [['Ann', '123']])).toThrow(
      /No column of this file holds e-mail addresses: no header names one \(the header row has: 1 "Name", 2 "Phone"\)/,
    );
  });

  it('judges cells as addresses without rejecting the misspelled ones a list is cleaned of', () => {
    for (const cell of ['ann@example.com', ' Bob.Lee+news@mail.example.org ', 'typo@gmial.con'])
      expect(looksLikeAddress(cell), cell).toBe(true);
    for (const cell of ['Ann <ann@example.com>', 'ann at example.com', '@example.com', 'ann@', 'a@b', 'a@b.c, d@e.f'])
      expect(looksLikeAddress(cell), cell).toBe(false);
  });
});
