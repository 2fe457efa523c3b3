import { ChartsPanel } from '../charts/ChartsPanel';
import { Explainer } from '../explainer/Explainer';
import { GroupInspector } from '../inspector/GroupInspector';
import { OwnTaskPanel } from '../inspector/OwnTaskPanel';
import { RunsTable } from '../runs/RunsTable';
import { useLabStore } from '../state/labStore';
import { ControlsPanel } from './ControlsPanel';
import { DownloadConsent } from './DownloadConsent';
import { ErrorBanner } from './ErrorBanner';
import { Intro } from './Intro';
import { LessonPanel } from './LessonPanel';
import { ProgressBar } from './ProgressBar';
import { RunToolbar } from './RunToolbar';
import { WarmStartPanel } from './WarmStartPanel';

/** The lab: settings on the left; toolbar, charts, inspector and explainer on the right. */
export function LabPage() {
  const presentation = useLabStore((s) => s.presentation);
  return (
    <div className={`lab${presentation ? ' presentation' : ''}`}>
      {!presentation && <ControlsPanel />}
      <div className="lab-main">
        <RunToolbar />
        {!presentation && <Intro />}
        {!presentation && <LessonPanel />}
        <DownloadConsent />
        <ErrorBanner />
        <ProgressBar />
        {presentation ? (
          <Explainer />
        ) : (
          <>
            <WarmStartPanel />
            <ChartsPanel />
            <RunsTable />
            <div className="inspect-row">
              <GroupInspector />
              <Explainer />
            </div>
            <OwnTaskPanel />
          </>
        )}
      </div>
    </div>
  );
}
