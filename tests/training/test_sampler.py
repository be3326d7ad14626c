import random
from collections import Counter

from posbias.training.sampler import PairSampler, candidate_numbers

QRELS = {f"q{i}": {f"pos{i}": 1} for i in range(4)}
DOCS = {**{f"pos{i}": f"the answer to question {i}" for i in range(4)},
        **{f"neg{j}": f"an unrelated text number {j}" for j in range(10)}}
# each query's run, best first: a relevant document in second place, then five negatives
RUNS = {f"q{i}": [f"neg{(3 * i) % 10}", f"pos{i}", *(f"neg{(3 * i + k) % 10}" for k in range(1, 5))] for i in range(4)}
TOP3_NEGATIVES = {q: {run[0], run[2], run[3]} for q, run in RUNS.items()}


def sampler(store, **options):
    numbers = candidate_numbers(((q, d) for q, run in RUNS.items() for d in run), store, set(QRELS), "test.run")
    return PairSampler(QRELS, numbers, store, **options)


def drawn_negatives(pairs, store, epochs=30):
    rng, drawn = random.Random(0), {q: set() for q in QRELS}
    for _ in range(epochs):
        for qid, _, negative in pairs.epoch(rng):
            drawn[qid].add(store.doc_id(negative))
    return drawn


def test_presampled_negatives_come_from_the_top_of_the_run_and_are_drawn_from_then_on(token_store):
    store = token_store(DOCS)
    pairs = sampler(store, negatives={"pool_depth": 3, "per_query": 2}, seed=4)
    chosen = {q: {store.doc_id(n) for n in pairs.negatives[q]} for q in QRELS}
    assert all(len(chosen[q]) == 2 and chosen[q] <= TOP3_NEGATIVES[q] for q in QRELS)
    assert drawn_negatives(pairs, store) == chosen  # every step draws one of the pre-sampled pair
    again = sampler(store, negatives={"pool_depth": 3, "per_query": 2}, seed=4)
    assert all((again.negatives[q] == pairs.negatives[q]).all() for q in QRELS)  # seeded: reproducible
    other = sampler(store, negatives={"pool_depth": 3, "per_query": 2}, seed=5)
    assert any(set(other.negatives[q]) != set(pairs.negatives[q]) for q in QRELS)
    assert pairs.fingerprint() != other.fingerprint()  # a saved state belongs to its pre-sample


def test_without_presampling_every_non_relevant_candidate_is_drawn(token_store):
    store = token_store(DOCS)
    drawn = drawn_negatives(sampler(store), store)
    assert drawn == {q: set(run) - {f"pos{q[1:]}"} for q, run in RUNS.items()}
    # a pool smaller than per_query keeps all of it
    small = sampler(store, negatives={"pool_depth": 2, "per_query": 2}, seed=0)
    assert {q: {store.doc_id(n) for n in small.negatives[q]} for q in QRELS} == {
        q: {run[0], run[2]} for q, run in RUNS.items()}


def test_an_epoch_visits_every_query_as_often_as_repeated(token_store):
    pairs = sampler(token_store(DOCS))
    visits = Counter(q for q, _, _ in pairs.epoch(random.Random(1), repeats=3))
    assert visits == {q: 3 for q in QRELS}
    assert Counter(q for q, _, _ in pairs.epoch(random.Random(1))) == {q: 1 for q in QRELS}
