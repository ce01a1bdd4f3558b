import { describe, expect, it } from 'vitest';
import { UsageError, parseOptions, resumeCommand, shellWord, verifiedPath, type Options } from '../src/options.ts';

const KEY = { VERIFY_API_KEY: 'sk_0123456789abcdefghijABCDEFGHIJ01' };
const ID = 'lst_5f0c3a9d8e7b6a5f4e3d2c1b';

function options(argv: string[], env: Record<string, string> = KEY): Options {
  const parsed = parseOptions(argv, env);
  if (parsed === 'help') throw new Error('unexpected help');
  return parsed;
}

describe('the command line', () => {
  it('uploads a file with the defaults: local API, key from the environment, output beside the input, named after it', () => {
    expect(options(['data/contacts.csv'])).toMatchObject({
      input: 'data/contacts.csv',
      resume: undefined,
      url: 'http://localhost:3000',
      key: KEY.VERIFY_API_KEY,
      keyFromFlag: false,
      name: 'contacts.csv',
      output: 'data/contacts.verified.csv',
      intervalMs: 2000,
      finish: false,
    });
  });

  it('takes --finish: finish the list once only retries wait', () => {
    expect(options(['contacts.csv', '--finish'])).toMatchObject({ finish: true });
    expect(options(['--resume', 'lst_0123456789abcdef01234567', '--finish'])).toMatchObject({ finish: true });
  });

  it('takes the URL from VERIFY_API_URL, and flags over the environment', () => {
    expect(options(['a.csv'], { ...KEY, VERIFY_API_URL: 'https://api.example.com/' }).url).toBe('https://api.example.com');
    const flagged = options(['a.csv', '--url', 'http://10.0.0.5:3000', '--key', 'sk_other', '--name', 'crm', '-o', 'out.csv'], {
      ...KEY,
      VERIFY_API_URL: 'https://api.example.com',
    });
    expect(flagged).toMatchObject({ url: 'http://10.0.0.5:3000', urlFromFlag: true, key: 'sk_other', keyFromFlag: true, name: 'crm' });
    expect(flagged).toMatchObject({ output: 'out.csv', outputFromFlag: true });
  });

  it('passes --column on as the service takes it: a header or a number from 1', () => {
    expect(options(['a.csv', '--column', ' Work Email '])).toMatchObject({ column: 'Work Email' });
    expect(options(['a.csv', '--column', '3'])).toMatchObject({ column: '3' });
    expect(options(['a.csv'])).toMatchObject({ column: undefined });
  });

  it('resumes by list id, with or without the file', () => {
    expect(options(['--resume', ID, 'contacts.csv'])).toMatchObject({ resume: ID, output: 'contacts.verified.csv' });
    expect(options(['--resume', ID])).toMatchObject({ resume: ID, input: undefined, output: `${ID}.verified.csv` });
  });

  it('refuses what it cannot do, saying why', () => {
    const refusal = (argv: string[], env: Record<string, string> = KEY) => {
      try {
        parseOptions(argv, env);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal([])).toContain('give the CSV file');
    expect(refusal(['a.csv'], {})).toContain('set VERIFY_API_KEY');
    expect(refusal(['a.csv', 'b.csv'])).toContain('one file at a time');
    expect(refusal(['--resume', 'lst_nope'])).toContain('--resume takes a list id');
    expect(refusal(['--resume', ID, '--name', 'x'])).toContain('not when it is resumed');
    expect(refusal(['a.csv', '--url', 'localhost:3000'])).toContain('--url must be');
    expect(refusal(['a.csv', '--interval', '0'])).toContain('--interval');
    expect(refusal(['a.csv', '--colour'])).toContain("Unknown option '--colour'");
    expect(refusal(['--resume', ID, '--column', '2'])).toContain('not when it is resumed');
    expect(refusal(['a.csv', '--column', ' '])).toContain('--column takes a header of the file or a column number');
    expect(refusal(['a.csv', '--column', '0'])).toContain('--column numbers count from 1');
    expect(parseOptions(['--help'], {})).toBe('help');
  });

  it('names the output after the input', () => {
    expect(verifiedPath('contacts.csv')).toBe('contacts.verified.csv');
    expect(verifiedPath('/exports/crm.2026.CSV')).toBe('/exports/crm.2026.verified.csv');
    expect(verifiedPath('list')).toBe('list.verified.csv');
  });
});

describe('the resume command', () => {
  it('repeats the list id, the file, and the flags the environment will not give again; never the key', () => {
    const plain = options(['contacts.csv']);
    expect(resumeCommand(plain, ID)).toBe(`verify-list --resume ${ID} contacts.csv`);
    const flagged = options(['my contacts.csv', '--url', 'http://10.0.0.5:3000', '--key', 'sk_secret', '--output', "Bob's.csv"]);
    const command = resumeCommand(flagged, ID);
    expect(command).toBe(`verify-list --resume ${ID} 'my contacts.csv' --url http://10.0.0.5:3000 --output 'Bob'\\''s.csv'`);
    expect(command).not.toContain('sk_secret');
  });

  it('quotes for a POSIX shell only what needs it', () => {
    expect(shellWord('/data/contacts-2026.csv')).toBe('/data/contacts-2026.csv');
    expect(shellWord('a b')).toBe("'a b'");
    expect(shellWord('$(rm -rf ~)')).toBe("'$(rm -rf ~)'");
  });
});
