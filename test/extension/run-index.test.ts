import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import {
  appendEpisodes,
  appendHistory,
  buildTokenizer,
  createRun,
  makeEnv,
  makeTasks,
  Rng,
  randomizeNames,
  runScripted,
  toTrajectoryJSON,
  uninformed,
} from '../../src/core/index.js';
import { describeEpisode, RunIndex } from '../../src/extension/run-index.js';

const tok = buildTokenizer(makeTasks('all'));
const tasks = makeTasks('train');
const rng = new Rng(5);
const episode = (step: number, index: number) =>
  toTrajectoryJSON(
    runScripted(uninformed, makeEnv(), randomizeNames(tasks[index % 20], rng), tok, rng),
    tok,
    {
      step,
      index,
    },
  );
const tmpRun = () => {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'el-index-')), 'run');
  createRun(dir, { kind: 'sample', name: 'run', config: {} });
  return dir;
};

describe('run index', () => {
  test('reads only what was appended, and leaves a half-written last line for later', async () => {
    const dir = tmpRun();
    const ix = new RunIndex(dir);
    assert.equal(await ix.update(), true, 'config.json read');
    assert.equal(ix.episodes.length, 0);
    appendEpisodes(dir, [episode(0, 0), episode(0, 1)]);
    appendHistory(dir, { step: 0, episodes: 2, pass_rate: 0.5 });
    assert.equal(await ix.update(), true);
    assert.equal(ix.episodes.length, 2);
    assert.deepEqual(ix.steps(), [0]);
    assert.equal(await ix.update(), false, 'nothing new');
    // A writer stopped mid-line: the partial line is not indexed until it is complete.
    const e = JSON.stringify(episode(1, 0));
    fs.appendFileSync(path.join(dir, 'episodes.jsonl'), e.slice(0, 50));
    await ix.update();
    assert.equal(ix.episodes.length, 2);
    fs.appendFileSync(path.join(dir, 'episodes.jsonl'), `${e.slice(50)}\n`);
    await ix.update();
    assert.equal(ix.episodes.length, 3);
    assert.deepEqual(ix.steps(), [0, 1]);
    const back = await ix.readEpisode(ix.byStep.get(1)![0]);
    assert.equal(JSON.stringify(back), e);
    assert.match(describeEpisode(ix.episodes[0]), /^(pass|fail) · reward /);
  });

  test('10 000 episodes: indexed once in well under two seconds, then refreshes are incremental', async () => {
    const dir = tmpRun();
    const base = Array.from({ length: 50 }, (_, i) => episode(0, i));
    const lines: string[] = [];
    for (let k = 0; k < 10_000; k++)
      lines.push(JSON.stringify({ ...base[k % 50], step: Math.floor(k / 500), index: k % 500 }));
    fs.writeFileSync(path.join(dir, 'episodes.jsonl'), `${lines.join('\n')}\n`);
    const ix = new RunIndex(dir);
    let t0 = performance.now();
    await ix.update();
    const first = performance.now() - t0;
    assert.equal(ix.episodes.length, 10_000);
    assert.equal(ix.steps().length, 20);
    assert.ok(first < 2000, `first index took ${first.toFixed(0)} ms`);
    appendEpisodes(dir, [episode(20, 0)]);
    t0 = performance.now();
    await ix.update();
    const again = performance.now() - t0;
    assert.equal(ix.episodes.length, 10_001);
    assert.ok(again < 50, `an incremental refresh took ${again.toFixed(1)} ms`);
    const last = await ix.readEpisode(ix.episodes[9_999]);
    assert.equal(last.index, 499);
  });
});
