from openbook import progress


def test_track_passes_items_through_off_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "enabled", lambda: False)
    assert list(progress.track(range(5), "x")) == [0, 1, 2, 3, 4]
    with progress.status("working"):
        pass


def test_track_draws_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "enabled", lambda: True)
    assert list(progress.track(iter(range(3)), "x", total=3)) == [0, 1, 2]
    with progress.status("working"):
        pass


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("OPENBOOK_PROGRESS", "0")
    assert progress.enabled() is False
