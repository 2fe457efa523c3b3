"""CoRe-Code Lab's judge as a reward function for verl, TRL and OpenRLHF.

Written beside each dataset by `npm run --silent tasks -- export --format openrlhf|verl|trl`.
It runs no code itself: it sends completions to the lab's reward server
(`npm run reward-server -- --tasks DIR/train.tasks.jsonl`), which runs them in its QuickJS
sandbox and answers the lab's reward (pass fraction + 0.25 x efficiency when every test
passes - 0.5 when no function can be extracted). Python standard library only.

Server address: the environment variable CORE_CODE_REWARD_URL (default http://127.0.0.1:5000).

  verl      custom_reward_function.path=DIR/core_code_reward.py
            custom_reward_function.name=compute_score  (one completion a call), or
            custom_reward_function.name=compute_score_batch reward_model.reward_manager=batch
  TRL       GRPOTrainer(reward_funcs=[core_code_reward.trl_reward], train_dataset=...)
            (the exported dataset's `task_id` column arrives as a keyword argument)
  OpenRLHF  --reward.remote_url http://127.0.0.1:5000/get_reward  (the server itself; older
            releases: --remote_rm_url), or --reward.remote_url DIR/core_code_reward.py, which
            calls reward_func below

`python3 core_code_reward.py` prints the server's /health, to check the address.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("CORE_CODE_REWARD_URL", "http://127.0.0.1:5000").rstrip("/")
TIMEOUT_S = float(os.environ.get("CORE_CODE_REWARD_TIMEOUT", "600"))
# The server's default --max-batch: one request per batch keeps the lab's efficiency term
# (each program compared with the other passing programs of its task in the same request).
MAX_BATCH = 1024
ATTEMPTS = 8


def _post(path, payload):
    body = json.dumps(payload).encode("utf-8")
    delay = 1.0
    for attempt in range(ATTEMPTS):
        request = urllib.request.Request(
            URL + path, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")
            try:
                detail = json.loads(detail).get("error", detail)
            except ValueError:
                pass
            # 429: the server's queue is full; it says when to come back.
            if error.code in (429, 503) and attempt + 1 < ATTEMPTS:
                time.sleep(float(error.headers.get("Retry-After") or delay))
                delay = min(delay * 2, 30.0)
                continue
            raise RuntimeError(f"reward server {URL}{path}: {error.code}: {detail}") from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            if attempt + 1 < ATTEMPTS:
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
                continue
            raise RuntimeError(f"reward server {URL}{path} unreachable: {error}") from None
    raise RuntimeError(f"reward server {URL}{path}: no answer after {ATTEMPTS} attempts")


def get_reward(queries, prompts, labels):
    """OpenRLHF's protocol: {query, prompts, labels} -> {rewards, scores, extra_logs}.

    A query is the prompt followed by the completion; the server reads the completion as the
    query after its prompt. A label is a task id of the server's task file.
    """
    queries, prompts, labels = list(queries), list(prompts), list(labels)
    answer = {"rewards": [], "scores": [], "extra_logs": {}}
    for start in range(0, len(queries), MAX_BATCH):
        end = start + MAX_BATCH
        part = _post(
            "/get_reward",
            {"query": queries[start:end], "prompts": prompts[start:end], "labels": labels[start:end]},
        )
        answer["rewards"] += part["rewards"]
        answer["scores"] += part["scores"]
        for key, values in part.get("extra_logs", {}).items():
            answer["extra_logs"].setdefault(key, []).extend(values)
    return answer


def _text(completion):
    """A TRL completion: a string, or chat messages (the last one's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return completion.get("content", "")
    return completion[-1]["content"] if completion else ""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward: solution_str is the response, ground_truth the task id."""
    return float(get_reward([solution_str], [""], [ground_truth])["rewards"][0])


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """verl's BatchRewardManager (reward_model.reward_manager=batch): one request per batch, so
    a task's completions are compared with each other for the efficiency term."""
    answer = get_reward(list(solution_strs), [""] * len(solution_strs), list(ground_truths))
    return [float(r) for r in answer["rewards"]]


def trl_reward(prompts, completions, task_id, **kwargs):
    """TRL GRPOTrainer reward function: one float per completion."""
    texts = [_text(completion) for completion in completions]
    return [float(r) for r in get_reward(texts, [""] * len(texts), task_id)["rewards"]]


def reward_func(queries, prompts, labels):
    """OpenRLHF's reward_func(queries, prompts, labels) for --reward.remote_url FILE.py."""
    return get_reward(queries, prompts, labels)


if __name__ == "__main__":
    try:
        with urllib.request.urlopen(URL + "/health", timeout=10) as response:
            print(response.read().decode("utf-8"))
    except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
        sys.exit(f"reward server {URL} unreachable: {error}")
