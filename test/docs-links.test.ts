/**
 * The documentation holds together: the README stays a short entry point (at most 350 lines) that
 * links every document under docs/, every relative link in the README and docs/ reaches a file that
 * exists (and, with `#anchor`, a heading of that file), and no file of the repository points to a
 * path outside it.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '..');
const DOCS = fs
  .readdirSync(path.join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`)
  .sort();
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

/** Markdown text without fenced code blocks and inline code spans (links there are not links). */
function prose(md: string): string {
  return md.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The targets of `[text](target)` links. */
function links(md: string): string[] {
  return [...prose(md).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);
}

/** GitHub's anchors of a file's headings: lower case, punctuation dropped, spaces as '-', repeats numbered. */
function anchors(md: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of md.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe('documentation', () => {
  it('the README is at most 350 lines and links every document under docs/', () => {
    const readme = read('README.md');
    assert.ok(readme.split('\n').length - 1 <= 350, `README.md has ${readme.split('\n').length - 1} lines`);
    assert.ok(DOCS.length >= 3, `docs/ holds ${DOCS.length} documents`);
    const linked = new Set(links(readme).map((t) => t.split('#')[0]));
    assert.deepEqual(
      DOCS.filter((d) => !linked.has(d)),
      [],
    );
  });

  it('every relative link reaches a file, and every anchor a heading of it', () => {
    const broken: string[] = [];
    for (const doc of ['README.md', ...DOCS]) {
      for (const target of links(read(doc))) {
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split('#');
        const rel = file === '' ? doc : path.posix.join(path.posix.dirname(doc), file);
        if (!fs.existsSync(path.join(ROOT, rel))) {
          broken.push(`${doc}: ${target} (no ${rel})`);
          continue;
        }
        if (anchor !== undefined && rel.endsWith('.md') && !anchors(read(rel)).has(anchor))
          broken.push(`${doc}: ${target} (no heading #${anchor} in ${rel})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('finds a broken anchor and a missing file (the check itself can fail)', () => {
    const md = '# A `b` c: d\n\n## Both cores\n\n## Both cores\n';
    assert.deepEqual([...anchors(md)], ['a-b-c-d', 'both-cores', 'both-cores-1']);
    assert.deepEqual(links('[x](docs/a.md#b) `[y](z.md)`\n```\n[w](v.md)\n```\n[u](https://e.org)'), [
      'docs/a.md#b',
      'https://e.org',
    ]);
  });

  it('no file of the repository refers to a path outside it', () => {
    const outside = ['..', 'shared'].join('/');
    const skip = new Set(['node_modules', 'dist', '.git', '.episode-lab', '.tmp', 'base', '.work']);
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (!skip.has(e.name)) walk(rel);
        } else if (/\.(ts|mjs|cjs|js|json|md|sh|py|css|wat)$/.test(e.name) && read(rel).includes(outside))
          found.push(rel);
      }
    };
    walk('.');
    assert.deepEqual(found, []);
  });
});
