import rig


def test_all_is_sorted_complete_and_importable() -> None:
    assert rig.__all__ == sorted(rig.__all__, key=str.lower) or rig.__all__ == sorted(rig.__all__)
    for name in rig.__all__:
        assert getattr(rig, name) is not None
    public = {n for n in vars(rig) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(rig.__all__), public - set(rig.__all__)
