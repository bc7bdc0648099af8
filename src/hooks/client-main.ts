/** Entry of the command hook when run from source (`node --import tsx src/hooks/client-main.ts <runtime> ...`). */
import { runHookClient } from './client';

process.exitCode = await runHookClient(process.argv.slice(2));
