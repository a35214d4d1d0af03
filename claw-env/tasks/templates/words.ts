// Topics and reply words the templates draw from.
export const TOPICS = ['budget review', 'launch plan', 'hiring panel', 'vendor contract', 'offsite agenda', 'Q2 roadmap', 'security audit', 'design review'];
export const WORDS = ['Thursday', 'approved', 'confirmed', 'room 12', 'noon', 'version 3'];
