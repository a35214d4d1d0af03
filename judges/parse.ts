// Pure parsing of judge replies. Semantics follow the original evaluation scripts (facts, not code):
// - WebVoyager evaluation/auto_eval.py: "NOT SUCCESS" anywhere → 0, else "SUCCESS" anywhere → 1, else no verdict
//   (the script returns None and the episode is left out). DeepShop's auto_eval_{attribute,filter,sort}.py use the
//   same test but count a reply with neither as 0 (judges/deepshop.ts).
// - Online-Mind2Web src/utils.py extract_predication: the text after the first "status:" (case-insensitive)
//   containing "success" → 1, else 0; a reply without "status:" is counted 0 there (judges/webjudge.ts does the
//   same and marks it unparsed) — this parser returns null for it so the judge can tell the two apart.
// - WebJudge key points: the text after "**Key Points**:" (else after the last "Key Points:", else the whole
//   reply), blank lines collapsed, each line left-trimmed.
// - WebJudge image scores: the first digit 1-5 after "Score"; the reason is the text after the last
//   "**Reasoning**:" up to the first blank line, newlines folded into spaces.

/** 1 = success, 0 = failure, null = the reply holds no verdict. Case-sensitive, as the original. */
export function parseSuccessVerdict(text: string): 0 | 1 | null {
  if (text.includes('NOT SUCCESS')) return 0;
  if (text.includes('SUCCESS')) return 1;
  return null;
}

/** "Status: success|failure" replies (WebJudge, Autonomous eval). */
export function parseStatusVerdict(text: string): 0 | 1 | null {
  const lower = text.toLowerCase();
  const i = lower.indexOf('status:');
  if (i < 0) return null;
  // Only the part after the first "status:" up to the next "status:" counts, as in the original split()[1].
  const rest = lower.slice(i + 'status:'.length);
  const j = rest.indexOf('status:');
  const seg = j < 0 ? rest : rest.slice(0, j);
  if (seg.includes('success')) return 1;
  if (seg.includes('fail')) return 0;
  // "Status:" followed by neither word is still a verdict in the original (0); an empty one is not.
  return seg.trim() === '' ? null : 0;
}

export function parseKeyPoints(text: string): string {
  const collapsed = text.replace(/\r\n/g, '\n').replace(/\n\n/g, '\n');
  const marker = '**Key Points**:';
  let body: string;
  const i = collapsed.indexOf(marker);
  if (i >= 0) {
    body = collapsed.slice(i + marker.length);
  } else {
    const j = collapsed.lastIndexOf('Key Points:');
    body = j >= 0 ? collapsed.slice(j + 'Key Points:'.length) : collapsed;
  }
  return body
    .split('\n')
    .map((l) => l.trimStart())
    .join('\n')
    .trim();
}

export interface ImageScore {
  score: number;
  reason: string;
}

/** null when the reply has no "Score" followed by a digit 1-5. */
export function parseImageScore(text: string): ImageScore | null {
  const i = text.indexOf('Score');
  if (i < 0) return null;
  const m = /[1-5]/.exec(text.slice(i + 'Score'.length));
  if (!m) return null;
  const r = text.lastIndexOf('**Reasoning**:');
  const after = (r >= 0 ? text.slice(r + '**Reasoning**:'.length) : text).trim();
  const reason = after.split('\n\n')[0].replace(/\n/g, ' ').trim();
  return { score: Number(m[0]), reason };
}
