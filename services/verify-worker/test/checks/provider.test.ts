import { describe, expect, it } from 'vitest';
import { providerOf, providerOfHost } from '../../src/checks/provider.ts';

describe('checks.provider from MX host names', () => {
  it.each([
    ['gmail-smtp-in.l.google.com', 'google'],
    ['aspmx.l.google.com', 'google'],
    ['alt1.aspmx.l.google.com.', 'google'],
    ['example-com.mail.protection.outlook.com', 'microsoft'],
    ['hotmail-com.olc.protection.outlook.com', 'microsoft'],
    ['mta5.am0.yahoodns.net', 'yahoo'],
    ['mx-aol.mail.gm0.yahoodns.net', 'yahoo'],
    ['mx01.mail.icloud.com', 'apple'],
    ['mx.zoho.eu', 'zoho'],
    ['mail.protonmail.ch', 'proton'],
    ['mx.yandex.net', 'yandex'],
    ['mxs.mail.ru', 'mailru'],
    ['mx00.gmx.net', 'gmx'],
    ['mx-ha03.web.de', 'gmx'],
    ['in1-smtp.messagingengine.com', 'fastmail'],
    ['mx0a-00123456.pphosted.com', 'proofpoint'],
    ['eu-smtp-inbound-1.mimecast.com', 'mimecast'],
    ['d123.ess.barracudanetworks.com', 'barracuda'],
    ['mx1.hc1234-56.iphmx.com', 'cisco'],
    ['cluster1.eu.messagelabs.com', 'broadcom'],
    ['mx00.ionos.de', 'ionos'],
    ['MX.ZOHO.COM', 'zoho'],
  ])('%s → %s', (host, provider) => {
    expect(providerOfHost(host)).toBe(provider);
  });

  it('a name that only looks like a provider is not one', () => {
    expect(providerOfHost('google.com.evil.test')).toBeNull();
    expect(providerOfHost('notgoogle.com')).toBeNull();
    expect(providerOfHost('mx.example.test')).toBeNull();
  });

  it('the most preferred host the table knows decides; null when none is known or no MX was learnt', () => {
    expect(providerOf(['mx.own.test', 'mx0a-1.pphosted.com', 'aspmx.l.google.com'])).toBe('proofpoint');
    expect(providerOf(['mx.own.test'])).toBeNull();
    expect(providerOf([])).toBeNull();
    expect(providerOf(null)).toBeNull();
  });
});
