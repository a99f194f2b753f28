// Review of a verified edit before it lands: the server annotates the edit
// for confirmation (preview = "always"); VS Code's own Refactor Preview
// would show such changes unticked, so that its primary Apply button
// applies nothing. The extension instead shows each changed file as a diff
// and asks Accept / Discard: Accept applies the edit, unannotated, as one
// workspace edit (one undo reverts it). No vscode import: unit-tested
// under node --test.
import { noLinks } from './runs';

/** An LSP position (UTF-16 code units, as JavaScript strings count). */
export interface Position {
  line: number;
  character: number;
}
export interface TextEdit {
  range: { start: Position; end: Position };
  newText: string;
}

/** One file a workspace edit changes. */
export interface FileReview {
  uri: string;
  create: boolean;
  delete: boolean;
  edits: TextEdit[];
}

/** What the preview notification says about an edit: its annotation's label and description. */
export interface ReviewInfo {
  label: string;
  description: string;
  files: FileReview[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

function textEdits(v: unknown): TextEdit[] {
  if (!Array.isArray(v)) return [];
  const out: TextEdit[] = [];
  for (const e of v) {
    if (!isObj(e) || !isObj(e.range) || typeof e.newText !== 'string') continue;
    const r = e.range as { start?: Position; end?: Position };
    if (!r.start || !r.end) continue;
    out.push({ range: { start: r.start, end: r.end }, newText: e.newText });
  }
  return out;
}

/** The files an LSP WorkspaceEdit changes, in its order, with the annotation that asks for confirmation. */
export function reviewInfo(edit: unknown): ReviewInfo {
  const info: ReviewInfo = { label: 'verified fix', description: '', files: [] };
  if (!isObj(edit)) return info;
  if (isObj(edit.changeAnnotations)) {
    for (const a of Object.values(edit.changeAnnotations)) {
      if (isObj(a) && a.needsConfirmation === true) {
        if (typeof a.label === 'string' && a.label) info.label = a.label;
        if (typeof a.description === 'string') info.description = a.description;
        break;
      }
    }
  }
  const byUri = new Map<string, FileReview>();
  const file = (uri: string) => {
    let f = byUri.get(uri);
    if (!f) {
      f = { uri, create: false, delete: false, edits: [] };
      byUri.set(uri, f);
      info.files.push(f);
    }
    return f;
  };
  if (Array.isArray(edit.documentChanges)) {
    for (const dc of edit.documentChanges) {
      if (!isObj(dc)) continue;
      if (dc.kind === 'create' && typeof dc.uri === 'string') file(dc.uri).create = true;
      else if (dc.kind === 'delete' && typeof dc.uri === 'string') file(dc.uri).delete = true;
      else if (isObj(dc.textDocument) && typeof dc.textDocument.uri === 'string') file(dc.textDocument.uri).edits.push(...textEdits(dc.edits));
    }
  } else if (isObj(edit.changes)) {
    for (const [uri, edits] of Object.entries(edit.changes)) file(uri).edits.push(...textEdits(edits));
  }
  return info;
}

/**
 * The same edit without change annotations: VS Code applies it at once
 * (no Refactor Preview) once the user has accepted it.
 */
export function withoutAnnotations<T>(edit: T): T {
  if (!isObj(edit)) return edit;
  const strip = (e: unknown) => {
    if (!isObj(e)) return e;
    const { annotationId: _a, ...rest } = e;
    return rest;
  };
  const out: Obj = { ...edit };
  delete out.changeAnnotations;
  if (Array.isArray(out.documentChanges)) {
    out.documentChanges = out.documentChanges.map((dc) => {
      const d = strip(dc);
      if (isObj(d) && Array.isArray(d.edits)) d.edits = d.edits.map(strip);
      return d;
    });
  }
  if (isObj(out.changes)) {
    out.changes = Object.fromEntries(Object.entries(out.changes).map(([u, es]) => [u, Array.isArray(es) ? es.map(strip) : es]));
  }
  return out as T;
}

/** The offset of an LSP position in text (clamped to the line and the text). */
export function offsetAt(text: string, p: Position): number {
  let off = 0;
  for (let line = 0; line < p.line; line++) {
    const nl = text.indexOf('\n', off);
    if (nl < 0) return text.length;
    off = nl + 1;
  }
  const eol = text.indexOf('\n', off);
  const lineEnd = eol < 0 ? text.length : eol;
  return Math.min(off + Math.max(0, p.character), lineEnd);
}

/** text with LSP edits applied (non-overlapping, as a WorkspaceEdit's are): what the file becomes. */
export function applyTextEdits(text: string, edits: TextEdit[]): string {
  const spans = edits
    .map((e, i) => ({ start: offsetAt(text, e.range.start), end: offsetAt(text, e.range.end), newText: e.newText, i }))
    .sort((a, b) => b.start - a.start || b.i - a.i);
  let out = text;
  for (const s of spans) out = out.slice(0, s.start) + s.newText + out.slice(Math.max(s.start, s.end));
  return out;
}

/** Lines added and removed between two texts (a line multiset difference: enough for a "+4 −1" summary). */
export function lineCounts(before: string, after: string): { added: number; removed: number } {
  const count = new Map<string, number>();
  const lines = (s: string) => (s === '' ? [] : s.replace(/\n$/, '').split('\n'));
  for (const l of lines(before)) count.set(l, (count.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of lines(after)) {
    const n = count.get(l) ?? 0;
    if (n > 0) count.set(l, n - 1);
    else added++;
  }
  let removed = 0;
  for (const n of count.values()) removed += n;
  return { added, removed };
}

export const ACCEPT = 'Accept';
export const DISCARD = 'Discard';

/** The one question asked about a verified edit, with the diff open. */
export function reviewMessage(info: ReviewInfo, files: { name: string; added: number; removed: number }[]): string {
  // The model chose the goal's words and the file names: no link syntax in a notification.
  const what = noLinks(files.map((f) => `${f.name} (+${f.added} −${f.removed})`).join(', '));
  const desc = info.description ? ` (${noLinks(info.description)})` : '';
  return `fixpoint: ${noLinks(info.label)}${desc}: ${what || 'no file changes'}. The diff is open: Accept applies it (one undo reverts it), Discard declines it.`;
}
