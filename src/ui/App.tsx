import { Playground } from './playground/Playground';

export function App() {
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
          <span className="tab active">Sandbox playground</span>
        </nav>
      </header>
      <main>
        <Playground />
      </main>
    </div>
  );
}
