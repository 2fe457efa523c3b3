import { useEffect, useState } from 'react';
import { bootLab } from './engineClient';
import { LabPage } from './lab/LabPage';
import { Playground } from './playground/Playground';

type Tab = 'lab' | 'playground';

const tabFromHash = (): Tab => (location.hash === '#playground' ? 'playground' : 'lab');

export function App() {
  const [tab, setTab] = useState<Tab>(tabFromHash);
  useEffect(() => {
    const onHash = () => setTab(tabFromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    void bootLab();
  }, []);
  return (
    <div className="app">
      <header className="app-header">
        <h1>
          CoRe-Code <span>Lab</span>
        </h1>
        <p className="tagline">
          A Planner and a Coder learn JavaScript together by collaborative GRPO, in your browser.
        </p>
        <nav>
          <a className={`tab${tab === 'lab' ? ' active' : ''}`} href="#lab">
            Lab
          </a>
          <a className={`tab${tab === 'playground' ? ' active' : ''}`} href="#playground">
            Sandbox playground
          </a>
        </nav>
      </header>
      <main>{tab === 'lab' ? <LabPage /> : <Playground />}</main>
    </div>
  );
}
