import pytest

from kashu.data import load_toml
from kashu.errors import KashuError
from kashu.hardware import catalog, get_gpu

REQUIRED = ["A100-40GB", "A100-80GB", "A800", "H100-SXM", "H100-PCIe", "H800-SXM", "H800-PCIe", "H20", "H200",
            "B200", "L40S", "L20", "RTX 4090", "MI300X", "Ascend 910B"]


def test_required_cards_present():
    names = {a.name for a in catalog()}
    assert set(REQUIRED) <= names


@pytest.mark.parametrize("alias,name", [("h800", "H800-SXM"), ("H800-SXM", "H800-SXM"), ("h800 sxm", "H800-SXM"),
                                        ("A100", "A100-80GB"), ("4090", "RTX 4090"), ("910b", "Ascend 910B"),
                                        ("h100_sxm", "H100-SXM"), ("H200", "H200")])
def test_aliases(alias, name):
    assert get_gpu(alias).name == name


def test_unknown_lists_close_matches():
    with pytest.raises(KashuError) as e:
        get_gpu("H900")
    assert "H800-SXM" in str(e.value) and "H900" in str(e.value)


def test_every_row_has_source_and_date():
    for row in load_toml("gpus.toml")["gpu"]:
        assert row["source"].strip() and row["as_of"].strip(), row["name"]
        assert row["confidence"] in ("A", "B", "C")


def test_dense_not_sparse():
    # the spec-sheet trap: dense BF16 is half the 'with sparsity' number
    assert get_gpu("H800").bf16_tflops == 989
    assert get_gpu("H100").bf16_tflops == 989
    assert get_gpu("A100").bf16_tflops == 312
    assert get_gpu("B200").bf16_tflops == 2250
    for a in catalog():
        if a.fp8_tflops:
            assert a.fp8_tflops == pytest.approx(2 * a.bf16_tflops, rel=0.02), a.name


def test_export_variants_have_cut_links():
    assert get_gpu("H800").intra_link_gbps_bidir < get_gpu("H100").intra_link_gbps_bidir
    assert get_gpu("A800").intra_link_gbps_bidir < get_gpu("A100").intra_link_gbps_bidir
    assert get_gpu("H800").intra_link_bytes_per_s_one_way == 200e9


def test_prices_and_defaults_are_sourced():
    for p in load_toml("prices.toml")["price"]:
        assert p["source"].strip() and p["as_of"].strip()
        get_gpu(p["gpu"])  # every priced card exists
        assert p["cny_per_card_hour"] > 0
    for key, row in load_toml("defaults.toml").items():
        assert row.get("source", "").strip(), key
