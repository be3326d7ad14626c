"""The recipe options of the training loop: clipping, loss reduction, per-epoch decay, repeated queries."""

import os
import signal
import threading

import numpy as np
import pytest
import torch

from posbias.rankers.registry import build_ranker
from posbias.training import loop, time_limit
from posbias.training.loop import optimizer_step, seed_everything, train
from posbias.training.recipe import TrainingSettings
from posbias.training.resume import TrainingState
from posbias.training.sampler import candidate_numbers

QUERIES = {f"q{i}": f"capital of land{i}" for i in range(6)}
DOCS = {**{f"pos{i}": f"the capital of land{i} is city{i} and it lies by the sea" for i in range(6)},
        **{f"neg{i}": f"land{i} has green hills and quiet rivers" for i in range(6)}}
QRELS = {f"q{i}": {f"pos{i}": 1} for i in range(6)}
CANDIDATES = {f"q{i}": [f"pos{i}", f"neg{i}", f"neg{(i + 1) % 6}"] for i in range(6)}
LR, HEAD_LR = 1e-3, 1e-2


class StopTraining(Exception):
    pass


@pytest.fixture
def trainer(tiny_backbone, tokenizer, token_store):
    """`trainer(**settings)` trains a fresh seeded MaxP on 6 queries (2 pairs a step: 3 steps an epoch) and
    returns the ranker, the summary and the learning rates of both groups at every optimizer step."""
    store = token_store(DOCS)
    numbers = candidate_numbers(((q, d) for q, docs in CANDIDATES.items() for d in docs), store, set(QRELS), "test")

    def run(state_dir=None, ranker_args=None, **overrides):
        recipe = dict(lr=LR, head_lr=HEAD_LR, epochs=2, batch_size=2, grad_accum=1, margin=1.0, warmup_fraction=0.0,
                      weight_decay=0.0, freeze_embeddings=False, device="cpu", precision="auto", max_grad_norm=1.0)
        seed_everything(2)
        ranker = build_ranker("maxp", dict(backbone=tiny_backbone, max_query_tokens=8, chunk_tokens=8, stride=8,
                                           max_doc_tokens=16, **(ranker_args or {})))
        rates = []
        original = loop.optimizer_step

        def recording(ranker, optimizer, *args):
            rates.append([group["lr"] for group in optimizer.param_groups])
            return original(ranker, optimizer, *args)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loop, "optimizer_step", recording)
            summary = train(ranker, tokenizer, QUERIES, store, QRELS, numbers,
                            TrainingSettings(**{**recipe, **overrides}), seed=2, progress=False, state_dir=state_dir)
        return ranker, summary, rates

    return run


def test_max_grad_norm_none_steps_with_the_whole_gradient():
    def update(max_grad_norm):
        model = torch.nn.Linear(2, 1, bias=False)
        with torch.no_grad():
            model.weight.zero_()
        optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
        model(torch.tensor([[30.0, 40.0]])).sum().backward()  # gradient (30, 40): norm 50
        optimizer_step(model, optimizer, scheduler, torch.amp.GradScaler("cpu", enabled=False), max_grad_norm)
        return -model.weight.detach()[0]

    assert torch.allclose(update(None), torch.tensor([30.0, 40.0]))
    assert torch.allclose(update(1.0), torch.tensor([0.6, 0.8]))


def test_a_summed_loss_gives_a_step_the_sum_of_its_pairs_gradients(trainer, monkeypatch):
    def first_step_gradient(reduction):
        gradients = []

        def capture(ranker, *args):
            gradients.append(ranker.head.score.weight.grad.clone())
            raise StopTraining

        monkeypatch.setattr(loop, "optimizer_step", capture)
        with pytest.raises(StopTraining):
            trainer(batch_size=2, grad_accum=2, loss_reduction=reduction)  # 4 pairs in the first step
        return gradients[0]

    mean, summed = first_step_gradient("mean"), first_step_gradient("sum")
    assert mean.abs().sum() > 0
    assert torch.allclose(summed, 4 * mean, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("warmup_fraction,epoch_one", [(1 / 3, [0.5, 1.0, 1.0]), (1.0, [1 / 6, 2 / 6, 3 / 6])])
def test_every_learning_rate_decays_after_each_epoch_on_top_of_the_warm_up(trainer, warmup_fraction, epoch_one):
    _, summary, rates = trainer(warmup_fraction=warmup_fraction, epoch_lr_decay=0.95)
    assert summary["steps"] == 6
    epoch_two = [0.95 * factor for factor in ([1.0] * 3 if warmup_fraction < 1 else [4 / 6, 5 / 6, 1.0])]
    np.testing.assert_allclose(rates, [[LR * f, HEAD_LR * f] for f in epoch_one + epoch_two])
    _, _, undecayed = trainer(warmup_fraction=warmup_fraction)
    np.testing.assert_allclose(undecayed[3:], [[LR * f / 0.95, HEAD_LR * f / 0.95] for f in epoch_two])


@pytest.mark.parametrize("stop_after", [3, 4])  # saved at the end of epoch 1 (before the decay); in epoch 2
def test_a_resumed_run_keeps_the_decayed_rates(trainer, tmp_path, monkeypatch, stop_after):
    whole, _, rates = trainer(epoch_lr_decay=0.5)
    original, saves = TrainingState.save, []

    def save_then_stop(self, *args):
        original(self, *args)
        saves.append(1)
        if len(saves) == stop_after:
            raise StopTraining

    monkeypatch.setattr(TrainingState, "save", save_then_stop)
    with pytest.raises(StopTraining):
        trainer(state_dir=str(tmp_path / "state"), save_every=1, epoch_lr_decay=0.5)
    monkeypatch.setattr(TrainingState, "save", original)
    resumed, _, resumed_rates = trainer(state_dir=str(tmp_path / "state"), save_every=1, epoch_lr_decay=0.5)
    assert resumed_rates == rates[stop_after:]
    assert all(torch.equal(a, b) for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()))


def test_repeated_queries_make_one_long_epoch_with_one_warm_up(trainer):
    _, summary, rates = trainer(epochs=1, query_repeats=3, warmup_fraction=1.0)
    assert summary["steps"] == 9  # 6 queries x 3 visits, 2 pairs a step
    assert [head for _, head in rates] == pytest.approx([HEAD_LR * (s + 1) / 9 for s in range(9)])


def every_gradient(ranker) -> dict:
    return {name: p.grad.clone() for name, p in ranker.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("how", [{"one_pass": True}, {"pass_pairs": 4}, {"pass_pairs": 8}, {"pass_pairs": 5}],
                         ids=["one_pass", "pass_pairs=4", "pass_pairs=8", "pass_pairs=5"])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_larger_passes_give_the_micro_batches_gradients(trainer, monkeypatch, reduction, how):
    """fp32, dropout off: a 16-pair step as 16 micro-batches of 1 pair, or in passes of `pass_pairs` (5: three of 5
    and a last of 1) or all in one (`one_pass`), every parameter's gradient the same (up to the order of float
    additions)."""
    def first_step(**settings):
        gradients = []

        def capture(ranker, *args):
            gradients.append(every_gradient(ranker))
            raise StopTraining

        monkeypatch.setattr(loop, "optimizer_step", capture)
        with pytest.raises(StopTraining):  # 6 queries visited 3 times: the first step has 16 pairs
            trainer(loss_reduction=reduction, ranker_args={"dropout": 0.0}, batch_size=1, grad_accum=16,
                    query_repeats=3, **settings)
        return gradients[0]

    micro, larger = first_step(), first_step(**how)
    assert micro.keys() == larger.keys() and len(micro) > 10
    # float sums in another order and matrix products of other shapes: every entry within 1e-4 of the largest
    # gradient entry (measured: up to 3.3e-5; a wrong weighting would be off by whole multiples). One tensor at a time
    # is no scale: the key biases' true gradient is 0 (softmax ignores a shift of every logit), so theirs is rounding.
    scale = max(float(g.abs().max()) for g in micro.values())
    worst = max(float((micro[n] - larger[n]).abs().max()) for n in micro) / scale
    print(f"largest gradient difference: {worst:.2e} of the largest entry")
    assert worst <= 1e-4
    assert sum(float(g.abs().sum()) for g in micro.values()) > 0


@pytest.mark.parametrize("saved,resumed", [({}, {"pass_pairs": 2}), ({"pass_pairs": 2}, {"one_pass": True}),
                                           ({"one_pass": True}, {})])
def test_a_state_resumes_under_another_pass_size(trainer, tmp_path, monkeypatch, saved, resumed):
    """The pass size chooses how a step is computed, not what it is (`loop.EXECUTION_SETTINGS`): a state saved with
    one resumes with another, its schedule and losses continued."""
    recipe = dict(batch_size=1, grad_accum=4, save_every=1)  # 6 queries: steps of 4 and 2 pairs, 4 steps in all
    _, _, rates = trainer(**recipe)
    original, saved_losses = TrainingState.save, []

    def save_then_stop(self, position, *args):
        original(self, position, *args)
        saved_losses.extend(position.losses)
        raise StopTraining

    monkeypatch.setattr(TrainingState, "save", save_then_stop)
    with pytest.raises(StopTraining):  # saved after the first step
        trainer(state_dir=str(tmp_path / "state"), **recipe, **saved)
    monkeypatch.setattr(TrainingState, "save", original)
    _, summary, resumed_rates = trainer(state_dir=str(tmp_path / "state"), **recipe, **resumed)
    assert len(saved_losses) == 1 and summary["losses"][:1] == saved_losses and len(summary["losses"]) == 4
    assert resumed_rates == rates[1:]


def test_batches_prepared_ahead_are_the_same_batches_and_train_the_same_weights(trainer, monkeypatch):
    """`training.prefetch` (a background thread prepares the next steps' batches) against each step's batches made
    when it runs: every batch equal, tensor by tensor, and the trained weights the same bits (CPU)."""
    original = loop.backward_passes

    def run(prefetch):
        batches = []

        def recording(ranker, passes, *args):
            batches.extend(batch for batch, _ in passes)
            return original(ranker, passes, *args)

        monkeypatch.setattr(loop, "backward_passes", recording)
        ranker, summary, _ = trainer(prefetch=prefetch, batch_size=1, grad_accum=2)
        return ranker, summary, batches

    ahead, ahead_summary, ahead_batches = run(True)
    inline, inline_summary, inline_batches = run(False)
    assert len(ahead_batches) == len(inline_batches) == 12  # 2 epochs x 3 steps x 2 passes
    for a, b in zip(ahead_batches, inline_batches):
        assert [name for name, _ in a.tensors()] == [name for name, _ in b.tensors()]
        assert all(torch.equal(x, y) for (_, x), (_, y) in zip(a.tensors(), b.tensors()))
    assert ahead_summary["losses"] == inline_summary["losses"]
    assert all(torch.equal(a, b) for a, b in zip(ahead.state_dict().values(), inline.state_dict().values()))
    assert not [thread for thread in threading.enumerate() if thread.name == "posbias-prefetch"]


def test_training_compile_compiles_the_backbone_for_the_steps(trainer, inside_context):
    """`training.compile` reaches `compiled_backbone` with the ranker, and every step runs inside it (whether compiled
    steps give eager numbers: tests/rankers/test_compilation.py)."""
    entered, steps_inside = inside_context(loop, "compiled_backbone", "backward_passes")
    trainer(compile=True)
    assert entered == [True, "left"] and steps_inside == [True] * 6


def test_training_packing_packs_the_steps_chunks_and_trains_to_the_padded_weights(trainer):
    """`training.packing: true` on a CPU (the packed reference; auto packs only on CUDA): every step runs packed,
    the summary says so, and with dropout off the weights end where the padded run's do, up to rounding."""
    packed, packed_summary, _ = trainer(packing=True, ranker_args={"dropout": 0.0})
    padded, padded_summary, _ = trainer(ranker_args={"dropout": 0.0})
    assert packed_summary["packed"] is True and "packed" not in padded_summary
    assert packed.encoder.packing is True
    assert packed_summary["losses"] == pytest.approx(padded_summary["losses"], abs=1e-5)
    # Adam divides each gradient entry by its own running size, so an entry whose true gradient is about 0 may move
    # by a share of the learning rate on rounding alone: weights within a tenth of LR (measured 2.7e-5), where one
    # step with a wrong gradient would move them by about LR
    worst = max(float((a - b).abs().max()) for a, b in zip(packed.state_dict().values(), padded.state_dict().values()))
    print(f"largest weight difference: {worst:.2e}")
    assert worst <= LR / 10


@pytest.mark.parametrize("stop", [signal.SIGUSR1, signal.SIGTERM, "time limit"])
def test_a_warning_signal_or_the_time_limit_saves_a_state_that_resumes_to_the_same_bits(trainer, tmp_path,
                                                                                        monkeypatch, stop):
    """SLURM's warning before the time limit, scancel's SIGTERM, or the SLURM job's time left (a fake `squeue` on
    PATH, asked at every step here) falling under `stop_before_limit_minutes` in the middle of training: the step
    finishes, the state is saved, the job stops; run again, it ends where an uninterrupted run ends, bit for bit."""
    whole, _, rates = trainer()
    original, steps = loop.optimizer_step, []
    time_left = tmp_path / "time_left"  # what the fake squeue answers
    time_left.write_text("15:00")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "squeue").write_text(f'#!/bin/sh\ncat "{time_left}"\n')
    (tmp_path / "bin" / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setattr(time_limit, "POLL_SECONDS", 0)

    def stopped(*args):
        steps.append(1)
        if len(steps) == 4:  # in epoch 2 (3 steps an epoch)
            if stop == "time limit":
                time_left.write_text("4:59")  # under the 5 minutes: due at the end of this step
            else:
                os.kill(os.getpid(), stop)  # the handler only notes it: this step still completes
        return original(*args)

    monkeypatch.setattr(loop, "optimizer_step", stopped)
    state = tmp_path / "state"
    why = (r"29\d s left of SLURM job 4242 \(training.stop_before_limit_minutes: 5\)" if stop == "time limit"
           else f"signal {stop.name}")
    with pytest.raises(loop.Preempted, match=rf"{why} at optimizer step 4 of 6; the state is "):
        trainer(state_dir=str(state), stop_before_limit_minutes=5)  # save_every 0, save_minutes 0: only the stop
    assert (state / "state.pt").is_file()
    assert not [thread for thread in threading.enumerate() if thread.name == "posbias-prefetch"]  # stopped too
    for number in loop.StopSignals.SIGNALS:
        assert signal.getsignal(number) is not None and signal.getsignal(number) != loop.StopSignals._note
    monkeypatch.setattr(loop, "optimizer_step", original)
    time_left.write_text("15:00")  # the retry: a new job, its whole time ahead
    resumed, _, resumed_rates = trainer(state_dir=str(state), stop_before_limit_minutes=5)
    assert resumed_rates == rates[4:]
    assert all(torch.equal(a, b) for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()))


def test_saving_by_elapsed_time(trainer, tmp_path, monkeypatch):
    clock = iter(range(0, 10_000, 50))  # 50 s per reading: the first step is due after a minute
    monkeypatch.setattr(loop, "monotonic", lambda: next(clock))
    saves = []
    original = TrainingState.save
    monkeypatch.setattr(TrainingState, "save", lambda self, position, *a: (saves.append(position.global_step),
                                                                           original(self, position, *a)))
    trainer(state_dir=str(tmp_path / "state"), save_minutes=1.0)
    assert saves == [2, 4]  # every other step (100 s > 60 s); never after the last


def test_without_a_state_to_save_training_leaves_the_stop_signals_to_end_the_process(trainer, monkeypatch):
    """No state directory (a benchmark, a notebook): nothing would be saved, so SIGTERM and SIGUSR1 keep their
    handlers and stop the process as usual, rather than being noted and ignored to the end of training."""
    original, seen = loop.optimizer_step, []

    def looking(*args):
        seen.append({number: signal.getsignal(number) for number in loop.StopSignals.SIGNALS})
        return original(*args)

    monkeypatch.setattr(loop, "optimizer_step", looking)
    before = {number: signal.getsignal(number) for number in loop.StopSignals.SIGNALS}
    trainer()
    assert seen and all(handlers == before for handlers in seen)
