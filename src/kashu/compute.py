"""Training compute: how many floating-point operations a run needs.

Plain arithmetic in the style of nanoGPT's estimate_mfu; each formula names its source.
"""

from __future__ import annotations

# Kaplan et al. 2020 §2.1: forward ≈ 2N FLOPs per token, backward ≈ 2x forward (4N), total 6N.
FORWARD_FLOPS_PER_PARAM = 2.0
BACKWARD_FLOPS_PER_PARAM = 4.0  # 2N for activation gradients + 2N for weight gradients


def training_flops(n_params: float, tokens: float) -> float:
    """C = 6·N·D (Kaplan et al. 2020, §2.1)."""
    return 6.0 * n_params * tokens


def flops_per_token(n_params: float, layers: int | None = None, hidden: int | None = None,
                    seq_len: int | None = None) -> float:
    """Model FLOPs per trained token: 6N, plus the attention term 12·L·h·s when the shape is known.

    PaLM (Chowdhery et al. 2022), Appendix B: 6N + 12·L·H·Q·T with H·Q = hidden size and T the
    sequence length; attention counted as non-causal, as PaLM does for MFU.
    """
    base = 6.0 * n_params
    if layers and hidden and seq_len:
        base += 12.0 * layers * hidden * seq_len
    return base


def lora_flops_per_token(n_params: float, adapter_params: float = 0.0) -> float:
    """LoRA (Hu et al. 2021, §4.2): frozen weights get no weight gradients.

    Per token: forward 2N + activation gradients 2N (still needed to reach the adapters in every
    layer) + the adapters' own 6·N_adapter. Weight gradients (2N) are skipped, so ≈ 4N, not 6N.
    """
    return (FORWARD_FLOPS_PER_PARAM + 2.0) * n_params + 6.0 * adapter_params


def lora_adapter_params(n_params: float, rank: int, layers: int | None = None, hidden: int | None = None) -> float:
    """Adapter parameters for rank-r LoRA on the four attention projections (Hu et al. 2021 §4.2/§7.1).

    Each adapted d×d matrix gets r·(d + d) parameters; 4 matrices per layer. Without the shape, use
    the GPT rule N ≈ 12·L·h² with L ≈ h/128 (Kaplan et al. 2020 Table 1 aspect ratios) to guess h.
    """
    if not (layers and hidden):
        hidden = (n_params * 128 / 12) ** (1 / 3)
        layers = max(1, round(hidden / 128))
    return 4 * layers * rank * 2 * hidden


def chinchilla_tokens(n_params: float, tokens_per_param: float = 20.0) -> float:
    """Compute-optimal tokens D ≈ 20·N (Hoffmann et al. 2022, §3 and Table 3)."""
    return tokens_per_param * n_params


def card_seconds(total_flops: float, peak_flops: float, mfu: float) -> float:
    """Seconds of one card: C / (dense peak × MFU). MFU as defined by PaLM Appendix B."""
    return total_flops / (peak_flops * mfu)
