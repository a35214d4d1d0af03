// Image formats, MIME types and file extensions: the one mapping every part uses (capture, recording frames,
// exports, judges, viewer).
import type { ImageFormat } from './observation.ts';

export const IMAGE_MIME: Record<ImageFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

const BY_EXT: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp' };

/** The image MIME type of a file name or path by its extension (`fallback` for anything else). */
export function imageMimeOf(path: string, fallback = 'application/octet-stream'): string {
  const dot = path.lastIndexOf('.');
  return (dot >= 0 && BY_EXT[path.slice(dot + 1).toLowerCase()]) || fallback;
}

/** The file extension (no dot) for an image MIME type or format name: jpg, png or webp (jpg for anything else). */
export function imageExtOf(mimeOrFormat: string): 'jpg' | 'png' | 'webp' {
  const t = mimeOrFormat.toLowerCase();
  if (t.includes('png')) return 'png';
  if (t.includes('webp')) return 'webp';
  return 'jpg';
}
