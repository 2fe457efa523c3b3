// A warm start from scratch as it trains and after: each role's supervised loss over its
// steps (one chart per role), and a summary of what it made once it ends.
import { LineChart } from '../charts/LineChart';
import { runColor } from '../charts/palette';
import { activeRun, useLabStore, type WarmStartRole } from '../state/labStore';

const ROLE_NAMES: Record<WarmStartRole, string> = {
  planner: 'Planner',
  coder: 'Coder',
  shared: 'Shared model',
};

const ROLE_CAPTIONS: Record<WarmStartRole, string> = {
  planner:
    'Cross-entropy per plan token on statement → reference plan (train split). It trains first, on its share of the minutes.',
  coder:
    'Cross-entropy per code token on statement + plan → reference program (train split). It trains second.',
  shared: 'Cross-entropy per answer token, both roles’ examples, one model.',
};

export function WarmStartPanel() {
  const run = useLabStore(activeRun);
  const status = useLabStore((s) => s.status);
  const record = run?.warmStart;
  if (!record) return null;
  const roles = (Object.keys(ROLE_NAMES) as WarmStartRole[]).filter(
    (role) =>
      (record.curves[role]?.length ?? 0) > 0 || record.summary?.roles.some((r) => r.role === role),
  );
  const { summary } = record;
  return (
    <section className="warmstart-panel" aria-label="Warm start" data-testid="warmstart-panel">
      <h2>Warm start from scratch</h2>
      <div className="warmstart-charts">
        {roles.map((role, index) => {
          const curve = record.curves[role] ?? [];
          return (
            <LineChart
              key={role}
              name={`warmstart-${role}`}
              title={`${ROLE_NAMES[role]} loss`}
              caption={ROLE_CAPTIONS[role]}
              series={[
                {
                  label: 'loss',
                  color: runColor(index),
                  steps: curve.map((p) => p.step),
                  values: curve.map((p) => p.loss),
                },
              ]}
              smoothing={0}
              height={140}
            />
          );
        })}
      </div>
      {summary ? (
        <p className="warmstart-summary" data-testid="warmstart-summary">
          {summary.stopped ? 'Ended by Pause' : 'Finished'} after {Math.round(summary.seconds)} s.{' '}
          {summary.roles
            .map((r) => {
              const first = record.curves[r.role]?.[0]?.loss;
              const from = first !== undefined ? `${first.toFixed(2)} → ` : '';
              return `${ROLE_NAMES[r.role]}: ${r.steps} steps, ${r.examples.toLocaleString('en')} examples, ${(r.parameters / 1e6).toFixed(2)}M parameters, loss ${from}${r.finalLoss.toFixed(2)}`;
            })
            .join('; ')}
          . The run starts from these models: Train or Step runs GRPO on them (the shipped
          checkpoints had about 50 minutes of this).
        </p>
      ) : (
        status === 'warmstart' && (
          <p className="warmstart-summary hint">
            Training… Pause ends it early with the models trained so far.
          </p>
        )
      )}
    </section>
  );
}
