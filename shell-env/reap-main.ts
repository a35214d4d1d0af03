// Entry of the shell watchdog (watchdog.ts) once its server died: removes what dead shell instances left.
import { reapDeadInstances } from './host-state.ts';

await reapDeadInstances();
