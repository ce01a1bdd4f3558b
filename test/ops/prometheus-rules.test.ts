/**
 * The Prometheus configuration and rules, checked by Prometheus's own tool: promtool validates the
 * configuration and the rule file, and runs the unit tests in deploy/prometheus/tests/, in which
 * every alert has a case that fires it and a case that does not (checked here too).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { requireBinary } from '@svc/testkit';

const DIR = 'deploy/prometheus';
const TESTS = join(DIR, 'tests');

function promtool(...args: string[]): string {
  requireBinary('promtool', 'apt-get install prometheus (Debian; .ci/run does it)');
  const run = spawnSync('promtool', args, { encoding: 'utf8' });
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0) throw new Error(`promtool ${args.join(' ')} failed:\n${output}`);
  return output;
}

interface RuleFile {
  groups: Array<{ rules: Array<{ alert?: string; record?: string }> }>;
}
interface TestFile {
  rule_files: string[];
  tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
}

const testFiles = readdirSync(TESTS)
  .filter((name) => name.endsWith('.yml'))
  .map((name) => join(TESTS, name));

describe('Prometheus configuration and rules (promtool)', () => {
  it('the configuration is valid and loads the rule file', () => {
    expect(promtool('check', 'config', join(DIR, 'prometheus.yml'))).toMatch(/SUCCESS: 1 rule files found/);
  });

  it('the rule file is valid', () => {
    expect(promtool('check', 'rules', join(DIR, 'alerts.yml'))).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('every alert has a unit test that fires it and one that does not', () => {
    const rules = parse(readFileSync(join(DIR, 'alerts.yml'), 'utf8')) as RuleFile;
    const alerts = rules.groups.flatMap((group) => group.rules.flatMap((rule) => (rule.alert === undefined ? [] : [rule.alert])));
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    const cases = testFiles.flatMap((file) => {
      const tests = parse(readFileSync(file, 'utf8')) as TestFile;
      expect(tests.rule_files, file).toEqual(['../alerts.yml']);
      return tests.tests.flatMap((test) => test.alert_rule_test ?? []);
    });
    for (const alert of alerts) {
      const own = cases.filter((entry) => entry.alertname === alert);
      expect(
        own.some((entry) => (entry.exp_alerts ?? []).length > 0),
        `${alert} has no test where it fires`,
      ).toBe(true);
      expect(
        own.some((entry) => (entry.exp_alerts ?? []).length === 0),
        `${alert} has no test where it stays silent`,
      ).toBe(true);
    }
    expect(cases.filter((entry) => !alerts.includes(entry.alertname))).toEqual([]);
  });

  it('the unit tests pass', () => {
    expect(testFiles.length).toBeGreaterThan(0);
    const output = promtool('test', 'rules', ...testFiles);
    expect(output.match(/SUCCESS/g)?.length).toBe(testFiles.length);
  });
});
