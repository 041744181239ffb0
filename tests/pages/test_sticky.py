"""ui.state.sticky: a setting's value outlives runs that do not draw its widget (what a
page switch does), is shared under one name, and gives way to the default where the
widget cannot take it.  tests/browser/test_browser_settings.py drives the same across real
pages in Chromium."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script():
    import streamlit as st

    from ui.state import sticky

    page = st.session_state.get("page", "a")
    if page == "a":
        st.selectbox("Policy A", ["p", "q", "r"], **sticky("pol_a", "p", "pol", ["p", "q", "r"],
                                                       index=True))
        st.number_input("Tolerance", min_value=0.0, max_value=0.5, format="%g",
                        **sticky("tol_a", 0.0, "tol", low=0, high=0.5))
    elif page == "b":
        st.selectbox("Policy B", ["p", "q"], **sticky("pol_b", "p", "pol", ["p", "q"], index=True))
    # page "c" draws nothing


def _app_of(script):
    at = AppTest.from_function(script, default_timeout=30)
    at.run()
    assert not at.exception
    return at


def _app():
    return _app_of(_script)


def _visit(at, page):
    at.session_state["page"] = page
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_value_survives_a_run_without_its_widget():
    at = _app()
    at.selectbox(key="pol_a").set_value("q").run()
    at.number_input(key="tol_a").set_value(0.01).run()
    _visit(at, "c")
    assert "pol_a" not in at.session_state  # Streamlit dropped the widget's own state
    _visit(at, "a")
    assert at.selectbox(key="pol_a").value == "q"
    assert at.number_input(key="tol_a").value == 0.01


def test_pages_with_the_same_name_share_the_value():
    at = _app()
    at.selectbox(key="pol_a").set_value("q").run()
    _visit(at, "b")
    assert at.selectbox(key="pol_b").value == "q"
    at.selectbox(key="pol_b").set_value("p").run()
    _visit(at, "a")
    assert at.selectbox(key="pol_a").value == "p"


def test_a_value_the_widget_cannot_take_gives_way_to_its_default():
    at = _app()
    at.selectbox(key="pol_a").set_value("r").run()
    _visit(at, "b")  # page b has no "r"
    assert at.selectbox(key="pol_b").value == "p"
    _visit(at, "a")  # page a still can
    assert at.selectbox(key="pol_a").value == "r"


def _url_script():
    import streamlit as st

    from ui.state import POLICY, TOLERANCE, sticky

    st.number_input("Tolerance", min_value=0.0, max_value=0.5, format="%g",
                    **sticky("tol_u", 0.0, TOLERANCE, low=0, high=0.5))
    st.selectbox("Policy", ["adaptive-pair-sum", "random"],
                 **sticky("pol_u", "adaptive-pair-sum", POLICY,
                          ["adaptive-pair-sum", "random"], index=True))


def test_the_shared_settings_live_in_the_address():
    at = AppTest.from_function(_url_script, default_timeout=30)
    at.query_params["tolerance"] = "0.01"
    at.query_params["policy"] = "nope"  # hand-edited: not a policy of the page
    at.run()
    assert not at.exception
    assert at.number_input(key="tol_u").value == 0.01
    assert at.selectbox(key="pol_u").value == "adaptive-pair-sum"
    assert at.query_params["tolerance"] == "0.01" and "policy" not in at.query_params
    at.selectbox(key="pol_u").set_value("random").run()
    assert at.query_params["policy"] == "random"
    at.number_input(key="tol_u").set_value(0.0).run()  # the default leaves the address
    assert "tolerance" not in at.query_params


def test_unreadable_address_values_are_dropped():
    at = AppTest.from_function(_url_script, default_timeout=30)
    at.query_params["tolerance"] = "abc"
    at.run()
    assert not at.exception
    assert at.number_input(key="tol_u").value == 0.0 and "tolerance" not in at.query_params


def _fallback_script():
    import streamlit as st

    from ui.state import sticky

    page = st.session_state.get("page", "a")
    if page == "a":
        st.selectbox("Rule A", ["s", "c", "x"], **sticky("rule_a", "s", "rule", ["s", "c", "x"],
                                                          index=True))
    else:  # page b cannot take "c"
        st.selectbox("Rule B", ["s", "x"], **sticky("rule_b", "s", "rule", ["s", "x"],
                                                     index=True))
        st.button("rerun")
    box = st.session_state.get("box", "p1")  # one box whose setting is kept per pool
    st.number_input("Budget", min_value=0, **sticky("budget", 0, f"budget_{box}", low=0))


def test_a_fallback_does_not_overwrite_the_other_pages_value():
    at = _app_of(_fallback_script)
    at.selectbox(key="rule_a").set_value("c").run()
    _visit(at, "b")
    assert at.selectbox(key="rule_b").value == "s"  # page b's default ...
    at.button[0].click().run()  # ... through a rerun of page b (the box untouched)
    _visit(at, "a")
    assert at.selectbox(key="rule_a").value == "c"  # ... and page a still has its value
    _visit(at, "b")
    at.selectbox(key="rule_b").set_value("x").run()  # a choice on page b is shared
    _visit(at, "a")
    assert at.selectbox(key="rule_a").value == "x"


def test_a_box_kept_per_pool_takes_the_new_pools_value():
    at = _app_of(_fallback_script)
    at.number_input(key="budget").set_value(150).run()
    at.session_state["box"] = "p2"
    at.run()
    assert at.number_input(key="budget").value == 0  # p2's own (default) value
    at.number_input(key="budget").set_value(7).run()
    at.session_state["box"] = "p1"
    at.run()
    assert at.number_input(key="budget").value == 150


def _page_url_script():
    import streamlit as st

    from ui.state import url_widget, write_url_state

    if st.session_state.get("page", "a") == "a":
        st.selectbox("Label", [0, 1], **url_widget("lab", 0, int, [0, 1]))
        st.text_input("Order", **url_widget("order", "3, 4, 1, 2"))
        st.slider("Cursor", 0, 10, **url_widget("cur", 10, int, low=0, high=10))
        write_url_state("lab", "order", "cur")


def test_a_pages_own_address_value_is_read_once_and_outlives_a_page_switch():
    at = AppTest.from_function(_page_url_script, default_timeout=30)
    at.query_params.update({"lab": "1", "order": "1, 2", "cur": "99"})  # 99: no cursor
    at.run()
    assert not at.exception
    assert at.selectbox(key="lab").value == 1 and at.text_input(key="order").value == "1, 2"
    assert at.slider(key="cur").value == 10 and at.query_params["cur"] == "10"
    at.text_input(key="order").set_value("4, 3").run()
    at.slider(key="cur").set_value(4).run()
    _visit(at, "c")  # another page: Streamlit drops the widgets' state ...
    assert "order" not in at.session_state
    at.query_params.clear()  # ... and the address a page link opens holds none of it
    _visit(at, "a")
    assert at.selectbox(key="lab").value == 1 and at.text_input(key="order").value == "4, 3"
    assert at.slider(key="cur").value == 4
    assert (at.query_params["order"], at.query_params["cur"]) == ("4, 3", "4")


def test_unreadable_page_address_values_give_the_defaults():
    at = AppTest.from_function(_page_url_script, default_timeout=30)
    at.query_params.update({"lab": "x", "cur": "-3"})
    at.run()
    assert not at.exception
    assert at.selectbox(key="lab").value == 0 and at.slider(key="cur").value == 10
    assert at.query_params["lab"] == "0" and at.query_params["cur"] == "10"


def _boxes():
    import streamlit as st

    from ui.inputs import budget_input, number_box

    n = st.session_state.get("n", 100)
    st.session_state["used_tol"] = number_box(st, "Tolerance", "nb_tol", 0.0, low=0.0,
                                              high=0.5, shared="tol", what="The tolerance",
                                              format="%g")
    number_box(st, "Seed", "nb_step", 0, low=0, what="The seed", step=1)
    st.session_state["used_budget"] = budget_input(st, "Budget", n, 10, "nb_budget",
                                                   f"budget_{n}", zero="0 (no budget)")


def test_a_number_outside_the_bounds_is_brought_in_and_the_box_shows_it():
    """The box shows the number the page uses, and says once why it is not the one typed
    (Streamlit's own bounds kept the last valid number in use under a red box)."""
    at = _app_of(_boxes)
    at.number_input(key="nb_tol").set_value(0.01).run()
    assert at.session_state["used_tol"] == 0.01 and not at.warning
    at.number_input(key="nb_tol").set_value(0.9).run()
    assert at.number_input(key="nb_tol").value == 0.5 == at.session_state["used_tol"]
    assert [w.value for w in at.warning] == [
        "The tolerance: 0.9 is above the largest value allowed, so 0.5 is used."]
    at.number_input(key="nb_tol").set_value(-1.0).run()
    assert at.number_input(key="nb_tol").value == 0.0 == at.session_state["used_tol"]
    assert "-1 is below the smallest value allowed, so 0 is used" in at.warning[0].value
    at.run()  # said once; the box keeps the number used
    assert not at.warning and at.number_input(key="nb_tol").value == 0.0
    at.number_input(key="nb_tol").set_value(0.5000001).run()  # the number as typed
    assert "0.5000001 is above the largest value allowed" in at.warning[0].value
    # the box's - button at the low end (Streamlit's bound disabled it there): one step
    # below, brought back without a word
    at.number_input(key="nb_step").set_value(-1).run()
    assert at.number_input(key="nb_step").value == 0 and not at.warning
    at.number_input(key="nb_step").set_value(-7).run()
    assert "-7 is below the smallest value allowed, so 0 is used" in at.warning[0].value
    at.number_input(key="nb_budget").set_value(-1).run()
    assert at.number_input(key="nb_budget").value == 0 and not at.warning

    at.number_input(key="nb_budget").set_value(-5).run()
    assert at.number_input(key="nb_budget").value == 0 == at.session_state["used_budget"]
    assert "-5 is below 0, so 0 (no budget) is used" in at.warning[0].value
    at.number_input(key="nb_budget").set_value(1000).run()
    assert at.number_input(key="nb_budget").value == 100 == at.session_state["used_budget"]
    assert "a budget of 1,000 buys no more than 100; 100 is used" in at.info[0].value


def test_a_box_that_changed_setting_does_not_report_the_old_number():
    """A budget kept per pool: after a switch to a smaller pool the old pool's 80 is not
    "brought in" with a message; the box shows the new pool's own budget."""
    at = _app_of(_boxes)
    at.number_input(key="nb_budget").set_value(80).run()
    at.session_state["n"] = 50
    at.run()
    assert not at.exception and not at.info and not at.warning
    assert at.number_input(key="nb_budget").value == 10 == at.session_state["used_budget"]
