import { ApiError, type QrJobResult } from '@svc/contracts';
import { describe, expect, it } from 'vitest';
import { perform, start } from '../../src/operations/operation.ts';
import { qrGenerate } from '../../src/operations/qr-generate.ts';
import { qrWifi } from '../../src/operations/qr-wifi.ts';
import { call, recordingRunner } from './support.ts';

const RENDERED: QrJobResult = {
  ok: true,
  version: 1,
  size: 21,
  margin: 4,
  format: 'svg',
  contentType: 'image/svg+xml; charset=utf-8',
  body: '<svg/>',
  png: 'iVBORw0KGgo=',
};

function catching(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  return undefined;
}

const parseRest = (input: Record<string, unknown>) => qrGenerate.input.rest.parse(input);

describe('the QR operations', () => {
  it('submit the validated input as the job payload itself, and hand back the runner’s own promise (no promise of their own on the QR path)', () => {
    const runner = recordingRunner(RENDERED);
    const payload = parseRest({ data: 'hi' });
    const started = start(qrGenerate, runner, payload, call);
    expect(started).toBe(runner.last);
    expect(runner.submitted).toEqual([{ operation: 'qr.generate', kind: 'qr', payload }]);
    expect(runner.submitted[0]?.payload).toBe(payload);
  });

  it('answer the rendered code as the worker sent it', async () => {
    const runner = recordingRunner(RENDERED);
    await expect(perform(qrWifi, runner, qrWifi.input.rest.parse({ ssid: 'Home', password: 'correct horse' }), call)).resolves.toEqual(
      RENDERED,
    );
    expect(runner.submitted[0]?.operation).toBe('qr.wifi');
  });

  it('refuse with the contract error the worker answered, its details included', () => {
    const refused: QrJobResult = {
      ok: false,
      error: { error: 'content_too_long', message: '`data` does not fit a version 10 code.', details: { param: 'data' } },
    };
    const thrown = catching(() => qrGenerate.answer(parseRest({ data: 'x' }), refused));
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown instanceof ApiError ? thrown.toBody() : thrown).toEqual(refused.error);
  });

  it('take the query string over REST and JSON arguments as a tool, which always asks for SVG and PNG', () => {
    expect(parseRest({ data: 'hi', format: 'json', scale: '2' })).toMatchObject({ data: 'hi', format: 'json', scale: 2 });
    expect(parseRest({ data: 'hi' }).png).toBeUndefined();
    expect(qrGenerate.input.tool.parse({ data: 'hi', scale: 2 })).toMatchObject({ data: 'hi', format: 'svg', png: true, scale: 2 });
    expect(qrWifi.input.tool.parse({ ssid: 'a;b', security: 'nopass' })).toMatchObject({
      data: 'WIFI:T:nopass;S:a\\;b;P:;H:false;;',
      png: true,
    });
  });

  it('refuse bad input through either door with the same contract error', () => {
    const viaRest = qrGenerate.input.rest.safeParse({ data: 'hi', colour: 'red' });
    const viaTool = qrGenerate.input.tool.safeParse({ data: 'hi', colour: 'red' });
    expect(viaRest.success || viaTool.success).toBe(false);
    if (viaRest.success || viaTool.success) return;
    const body = qrGenerate.input.invalid(viaRest.error).toBody();
    expect(body).toEqual({ error: 'invalid_parameter', message: 'Unknown parameter `colour`.', details: { param: 'colour' } });
    expect(qrGenerate.input.invalid(viaTool.error).toBody()).toEqual(body);
  });
});
