// Which roles update at a step: core mode's training schedule. `simultaneous` updates every
// trained role every step; `alternating` runs stages of K steps (`stageSteps`), the Planner's
// first (the Coder frozen), then the Coder's (the Planner frozen), and so on, as the paper
// trains its roles in turn. Other agents (Debugger, Retriever) are not part of the turns.
import type { GrpoConfig, Role } from './config';

/** The role a stage trains: stage 0, 2, 4, … the Planner; 1, 3, 5, … the Coder. */
export function stageRole(stepIndex: number, stageSteps: number): 'planner' | 'coder' {
  return Math.floor(stepIndex / stageSteps) % 2 === 0 ? 'planner' : 'coder';
}

/**
 * Whether `role` updates at the step with 0-based index `stepIndex` (the step being taken;
 * metrics number it stepIndex + 1).
 */
export function roleTrainsAt(
  config: Pick<GrpoConfig, 'mode' | 'schedule' | 'stageSteps'>,
  role: Role,
  stepIndex: number,
): boolean {
  if (config.schedule !== 'alternating' || config.mode !== 'core') return true;
  if (role !== 'planner' && role !== 'coder') return true;
  return stageRole(stepIndex, config.stageSteps) === role;
}
