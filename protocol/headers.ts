// Response headers of the wire protocol that clients may read (no zod here: the typed client ships with this).

/**
 * On a JSON step/observation answer that carries a screenshot: `<start> <end>`, the byte range of the screenshot's
 * base64 characters in the body (end exclusive). A client may copy the base64 out of that range and parse only
 * the rest as JSON (the typed client does: client/answer.ts); a client that ignores it parses the body as usual.
 */
export const SCREENSHOT_SPAN_HEADER = 'grove-screenshot-span';
