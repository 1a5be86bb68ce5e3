"""Drives every endpoint of a live polld through a client that
openapi-python-client generated from its `GET /api` document
(run by tests/operations/openapi_tools.rs: `python drive_python.py BASE_URL`, with the
generated package `anonpoll_client` on PYTHONPATH).

Only the generated functions and models are used, never raw JSON: a
document that makes the generator emit wrong types, or a server that answers
outside the document, fails here. Each answer must parse as the model the
document names for its status (`parsed` is that model, not None).

Extending: every API addition (question types, result modes, invites, ...)
adds or widens a step below and lists it in STEPS, in the same change. A step
takes the shared `State` and records what later steps need on it.
"""

import datetime
import re
import sys
import httpx
from dataclasses import dataclass, field
from typing import Any

from anonpoll_client import AuthenticatedClient, Client
from anonpoll_client.api.default import (
    create_poll,
    delete_poll,
    get_api_schema,
    get_invites,
    get_poll,
    get_results,
    issue_invites,
    update_poll,
)
from anonpoll_client.models import (
    ChoiceResults,
    CreatedPoll,
    InviteRequest,
    InviteStatus,
    IssuedInvites,
    LanguageVersion,
    LanguageVersionQuestionsItem,
    MultipleQuestion,
    NewPoll,
    NewPollDuplicateCheck,
    NewPollExpiryDays,
    NewPollLang,
    NewPollResultsVisibility,
    Poll,
    PollMultipleQuestion,
    PollPatch,
    PollPatchDuplicateCheck,
    PollPatchExpiryDays,
    PollPatchResultsVisibility,
    PollPatchTranslations,
    PollRankedQuestion,
    PollScaleQuestion,
    PollScheduleQuestion,
    PollSingleQuestion,
    Problem,
    RankedQuestion,
    RankedResults,
    Results,
    ScaleQuestion,
    ScaleResults,
    ScheduleQuestion,
    ScheduleResults,
    SingleQuestion,
    ValidationProblem,
)
from anonpoll_client.types import UNSET


def check(cond: bool, what: str, got: Any = None) -> None:
    if not cond:
        raise AssertionError(f"{what}; got: {got!r}")


def expect(resp: Any, status: int, model: type, what: str) -> Any:
    """The answer has `status` and its body parsed as `model`."""
    check(resp.status_code == status, f"{what}: status {status}", (resp.status_code, resp.content[:300]))
    check(isinstance(resp.parsed, model), f"{what}: body parsed as {model.__name__}", resp.parsed)
    print(f"ok  {what}: {status} {model.__name__}")
    return resp.parsed


@dataclass
class State:
    base: str
    anon: Client
    polls: dict = field(default_factory=dict)  # name -> CreatedPoll
    # One client (one kept-alive connection) per token: polld allows a client
    # 8 open connections, and a client object keeps its connection open.
    clients: dict = field(default_factory=dict)  # token -> AuthenticatedClient

    def client(self, token: str) -> AuthenticatedClient:
        if token not in self.clients:
            self.clients[token] = AuthenticatedClient(base_url=self.base, token=token)
        return self.clients[token]

    def admin(self, name: str) -> AuthenticatedClient:
        return self.client(self.polls[name].admin_token)

    def wrong_admin(self) -> AuthenticatedClient:
        return self.client("A" * 43)


def new_poll(title: str, results_public: bool) -> NewPoll:
    return NewPoll(
        title=title,
        lang=NewPollLang.EN,
        expiry_days=NewPollExpiryDays.VALUE_7,
        results_public=results_public,
        questions=[
            SingleQuestion(label="Pick one", options=["Pizza", "Sushi", "Salad"], type_="single"),
            SingleQuestion(label="And to drink?", options=["Water", "Juice"]),
        ],
    )


def step_document(s: State) -> None:
    resp = get_api_schema.sync_detailed(client=s.anon)
    check(resp.status_code == 200, "GET /api: 200", resp.status_code)
    print("ok  GET /api: 200")


def step_create(s: State) -> None:
    for name, public in (("private", False), ("public", True)):
        created = expect(
            create_poll.sync_detailed(client=s.anon, body=new_poll(f"Lunch ({name})", public)),
            201,
            CreatedPoll,
            f"create {name} poll",
        )
        check(len(created.admin_token) == 43, "adminToken has 43 characters", created.admin_token)
        check(isinstance(created.poll, Poll) and created.poll.id == created.id, "created.poll is the Poll", created.poll)
        check(created.poll.results_public is public, "resultsPublic as sent", created.poll.results_public)
        check(created.expires_on > created.poll.created_on, "expiresOn after createdOn (dates)", created.expires_on)
        s.polls[name] = created


def step_create_invalid(s: State) -> None:
    bad = new_poll("Too few options", False)
    bad.questions = [SingleQuestion(label="Only one", options=["Lonely"])]
    problem = expect(create_poll.sync_detailed(client=s.anon, body=bad), 422, ValidationProblem, "create invalid")
    check(problem.status == 422 and problem.errors, "422 lists errors", problem)
    check(any("options" in e.field for e in problem.errors), "the error names the options field", problem.errors)


def step_read(s: State) -> None:
    poll = expect(get_poll.sync_detailed(s.polls["private"].id, client=s.anon), 200, Poll, "read poll")
    check(poll.title == "Lunch (private)", "title as created", poll.title)
    check([q.options for q in poll.questions][0] == ["Pizza", "Sushi", "Salad"], "options as created", poll.questions)
    check(poll.status.value == "open", "a new poll is open", poll.status)
    check(poll.media == [], "no media through the API", poll.media)
    check(poll.vote_changes is True, "voteChanges true when not sent", poll.vote_changes)


def step_results(s: State) -> None:
    private, public = s.polls["private"].id, s.polls["public"].id
    expect(get_results.sync_detailed(private, client=s.anon), 401, Problem, "private results without token")
    expect(get_results.sync_detailed(private, client=s.wrong_admin()), 401, Problem, "private results, wrong token")
    results = expect(get_results.sync_detailed(private, client=s.admin("private")), 200, Results, "private results")
    check(results.total_responses == 0 and len(results.questions) == 2, "empty results of both questions", results)
    check([o.label for o in results.questions[0].options] == ["Pizza", "Sushi", "Salad"], "option labels", results)
    expect(get_results.sync_detailed(public, client=s.anon), 200, Results, "public results without token")


def step_question_types(s: State) -> None:
    """One question of each type: created, read back typed, results per type."""
    body = new_poll("Every type", True)
    body.questions = [
        SingleQuestion(label="Lunch?", options=["Pizza", "Sushi"]),
        MultipleQuestion(type_="multiple", label="Toppings", options=["Cheese", "Olives", "Basil"], max_choices=2, required=True),
        RankedQuestion(type_="ranked", label="Rank the days", options=["Mon", "Tue", "Wed"]),
        ScaleQuestion(type_="scale", label="How hungry?", scale_min=0, scale_max=10, min_label="Not at all", max_label="Starving"),
    ]
    created = expect(create_poll.sync_detailed(client=s.anon, body=body), 201, CreatedPoll, "create a poll of every type")
    s.polls["every type"] = created
    poll = expect(get_poll.sync_detailed(created.id, client=s.anon), 200, Poll, "read the poll of every type")
    single, multiple, ranked, scale = poll.questions
    check(isinstance(single, PollSingleQuestion) and single.type_ == "single", "single, type filled in", single)
    check(single.required is False and single.options == ["Pizza", "Sushi"], "single: required false, options", single)
    check(isinstance(multiple, PollMultipleQuestion) and multiple.required is True, "multiple, required", multiple)
    check((multiple.min_choices, multiple.max_choices) == (1, 2), "multiple: minChoices filled in", multiple)
    check(isinstance(ranked, PollRankedQuestion) and ranked.options == ["Mon", "Tue", "Wed"], "ranked", ranked)
    check(isinstance(scale, PollScaleQuestion) and (scale.scale_min, scale.scale_max) == (0, 10), "scale ends", scale)
    check((scale.min_label, scale.max_label) == ("Not at all", "Starving"), "scale end labels", scale)
    check(all(isinstance(q.label, str) and isinstance(q.required, bool) for q in poll.questions), "typed fields", poll)

    results = expect(get_results.sync_detailed(created.id, client=s.anon), 200, Results, "results of every type")
    single_r, multiple_r, ranked_r, scale_r = results.questions
    for r, kind in ((single_r, "single"), (multiple_r, "multiple")):
        check(isinstance(r, ChoiceResults) and r.type_.value == kind and r.answered == 0, f"{kind} results", r)
        check([(o.count, o.percent) for o in r.options] == [(0, 0.0)] * len(r.options), f"{kind}: zero counts", r)
    check(isinstance(ranked_r, RankedResults) and ranked_r.method == "schulze", "ranked results", ranked_r)
    check([o.first_choices for o in ranked_r.options] == [0, 0, 0], "ranked: no first choices", ranked_r)
    check(ranked_r.pairwise == [[0] * 3] * 3, "ranked: pairwise all zeros", ranked_r.pairwise)
    check([(p.place, p.options) for p in ranked_r.ranking] == [(1, ["Mon", "Tue", "Wed"])], "all tied first", ranked_r)
    check(isinstance(scale_r, ScaleResults) and scale_r.mean is None and scale_r.median is None, "scale: no mean", scale_r)
    check([(d.value, d.count) for d in scale_r.distribution] == [(v, 0) for v in range(11)], "scale: 0..10", scale_r)

    french = LanguageVersion(
        title="Tous les types",
        questions=[
            LanguageVersionQuestionsItem(label="Déjeuner ?", options=["Pizza", "Sushi"]),
            LanguageVersionQuestionsItem(label="Garnitures", options=["Fromage", "Olives", "Basilic"]),
            LanguageVersionQuestionsItem(label="Classez les jours", options=["Lun", "Mar", "Mer"]),
            LanguageVersionQuestionsItem(label="Quelle faim ?", min_label="Pas du tout", max_label="Affamé"),
        ],
    )
    translations = PollPatchTranslations()
    translations["fr"] = french
    admin = s.admin("every type")
    poll = expect(
        update_poll.sync_detailed(created.id, client=admin, body=PollPatch(translations=translations)),
        200,
        Poll,
        "French version with a scale's end labels",
    )
    scale_fr = poll.translations["fr"].questions[3]
    check(scale_fr.min_label == "Pas du tout" and scale_fr.options in ([], UNSET), "French end labels", scale_fr)
    french.questions[3].max_label = UNSET
    translations["fr"] = french
    problem = expect(
        update_poll.sync_detailed(created.id, client=admin, body=PollPatch(translations=translations)),
        422,
        ValidationProblem,
        "French version without the high end's label",
    )
    check([e.field for e in problem.errors] == ["translations.fr.questions[3].maxLabel"], "names maxLabel", problem)


def vote_on_share_page(s: State, poll_id: str, fields: dict[str, str]) -> None:
    """Votes as a person does (the API has no vote endpoint): the share page's
    form, with its one-time ballot code and `fields` (docs/WEB.md)."""
    with httpx.Client(base_url=s.base) as web:
        page = web.get(f"/p/{poll_id}")
        code = re.search(r'name="ballot"[^>]*value="([^"]+)"', page.text)
        check(page.status_code == 200 and code is not None, "a share page with a vote form", page.status_code)
        resp = web.post(f"/p/{poll_id}", data={**fields, "ballot": code.group(1)})
        check(resp.status_code == 200, "the vote is taken", (resp.status_code, resp.text[:300]))


def step_schedule(s: State) -> None:
    """A schedule question: created with a time zone, read back typed, voted on
    through the share page's form, its results typed per slot."""
    slots = ["2027-01-14", "2027-01-14T18:30", "2027-01-15T09:00"]
    body = new_poll("When shall we meet?", True)
    body.duplicate_check = NewPollDuplicateCheck.NONE
    body.questions = [
        SingleQuestion(label="Lunch?", options=["Pizza", "Sushi"]),
        ScheduleQuestion(type_="schedule", label="When?", options=slots, time_zone="europe/paris"),
        ScheduleQuestion(type_="schedule", label="Which day?", options=["2027-02-01", "2027-02-02"], required=True),
    ]
    created = expect(create_poll.sync_detailed(client=s.anon, body=body), 201, CreatedPoll, "create a schedule poll")
    s.polls["schedule"] = created
    poll = expect(get_poll.sync_detailed(created.id, client=s.anon), 200, Poll, "read the schedule poll")
    _, zoned, plain = poll.questions
    check(isinstance(zoned, PollScheduleQuestion) and zoned.type_ == "schedule", "a typed schedule question", zoned)
    check(zoned.options == slots and zoned.required is False, "slots as created, required filled in", zoned)
    check(zoned.time_zone == "Europe/Paris", "the zone as the database spells it", zoned.time_zone)
    check(isinstance(plain, PollScheduleQuestion) and plain.time_zone is UNSET, "no zone made up", plain)

    bad = new_poll("Refused", True)
    for options, zone, where in ((["2027-01-15", "2027-01-14"], UNSET, "options[1]"), (slots, "Mars/Base", "timeZone")):
        bad.questions = [ScheduleQuestion(type_="schedule", label="When?", options=options, time_zone=zone)]
        problem = expect(create_poll.sync_detailed(client=s.anon, body=bad), 422, ValidationProblem, f"bad {where}")
        check([e.field for e in problem.errors] == [f"questions[0].{where}"], f"names {where}", problem.errors)

    # Yes, if need be, yes; a slot left out is no.
    vote_on_share_page(s, created.id, {"q1s0": "yes", "q1s1": "ifneedbe", "q1s2": "yes", "q2s0": "no"})
    vote_on_share_page(s, created.id, {"q1s1": "yes", "q1s2": "yes", "q2s1": "ifneedbe"})
    results = expect(get_results.sync_detailed(created.id, client=s.anon), 200, Results, "results of the schedule poll")
    _, when, day = results.questions
    check(isinstance(when, ScheduleResults) and when.type_.value == "schedule", "typed schedule results", when)
    check(when.answered == 2 and when.time_zone == "Europe/Paris", "answered, zone", when)
    got = [(x.slot, x.yes, x.if_need_be, x.no, x.best) for x in when.slots]
    want = [(slots[0], 1, 0, 1, False), (slots[1], 1, 1, 0, False), (slots[2], 2, 0, 0, True)]
    check(got == want, "yes, if need be, no and best per slot", got)
    check(when.best_first == [slots[2], slots[1], slots[0]], "best first", when.best_first)
    check(isinstance(day, ScheduleResults) and day.time_zone is UNSET, "no zone in the results", day)
    check([(x.yes, x.if_need_be, x.no, x.best) for x in day.slots] == [(0, 0, 2, False), (0, 1, 1, True)], "day", day)


def step_settings(s: State) -> None:
    """resultsVisibility, closesOn and shuffleOptions, through the typed models."""
    closes = datetime.date.today() + datetime.timedelta(days=3)
    body = new_poll("Lunch (after close)", False)
    body.results_visibility = NewPollResultsVisibility.AFTERCLOSE
    body.closes_on = closes
    body.shuffle_options = True
    created = expect(create_poll.sync_detailed(client=s.anon, body=body), 201, CreatedPoll, "create afterClose poll")
    s.polls["after close"] = created
    poll = created.poll
    check(poll.results_visibility.value == "afterClose" and poll.results_public is False, "visibility as sent", poll)
    check(poll.closes_on == closes and poll.shuffle_options is True, "closesOn and shuffleOptions as sent", poll)
    problem = expect(get_results.sync_detailed(created.id, client=s.anon), 403, Problem, "withheld results")
    check(closes.isoformat() in problem.detail, "the 403 says when", problem.detail)
    expect(get_results.sync_detailed(created.id, client=s.admin("after close")), 200, Results, "results with the token")
    patch = PollPatch(results_visibility=PollPatchResultsVisibility.PUBLIC, closes_on=None)
    updated = expect(
        update_poll.sync_detailed(created.id, client=s.admin("after close"), body=patch), 200, Poll, "patch settings"
    )
    check(updated.closes_on is None and updated.results_public is True, "closesOn removed, results public", updated)


def step_invites(s: State) -> None:
    """duplicateCheck and voteChanges, and invite codes issued and counted through the typed models."""
    body = new_poll("Works council", False)
    body.duplicate_check = NewPollDuplicateCheck.INVITE
    body.vote_changes = False
    created = expect(create_poll.sync_detailed(client=s.anon, body=body), 201, CreatedPoll, "create invite-only poll")
    s.polls["invite"] = created
    check(created.poll.duplicate_check.value == "invite", "duplicateCheck as sent", created.poll.duplicate_check)
    check(created.poll.vote_changes is False, "voteChanges as sent", created.poll.vote_changes)
    pid = created.id
    expect(
        issue_invites.sync_detailed(pid, client=s.wrong_admin(), body=InviteRequest(count=3)),
        401,
        Problem,
        "invites with a wrong token",
    )
    issued = expect(
        issue_invites.sync_detailed(pid, client=s.admin("invite"), body=InviteRequest(count=3)),
        201,
        IssuedInvites,
        "issue 3 invites",
    )
    check(len(issued.invites) == 3 and issued.issued == 3 and issued.used == 0, "3 issued, none used", issued)
    shape = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){4}$")
    for invite in issued.invites:
        check(shape.match(invite.code) is not None, "code shape", invite.code)
        check(invite.url == f"{created.share_url}#invite={invite.code}", "the url carries the code in the fragment", invite)
    check(len({i.code for i in issued.invites}) == 3, "codes differ", issued.invites)
    problem = expect(
        issue_invites.sync_detailed(pid, client=s.admin("invite"), body=InviteRequest(count=1001)),
        422,
        ValidationProblem,
        "1001 invites",
    )
    check([e.field for e in problem.errors] == ["count"], "the 422 names count", problem.errors)
    status = expect(get_invites.sync_detailed(pid, client=s.admin("invite")), 200, InviteStatus, "invite status")
    check(status.issued == 3 and status.used == 0, "status counts", status)
    poll = expect(
        update_poll.sync_detailed(
            pid, client=s.admin("invite"), body=PollPatch(duplicate_check=PollPatchDuplicateCheck.NONE)
        ),
        200,
        Poll,
        "patch duplicateCheck",
    )
    check(poll.duplicate_check.value == "none", "duplicateCheck changed", poll.duplicate_check)
    check(poll.vote_changes is False, "voteChanges kept by a PATCH without it", poll.vote_changes)
    poll = expect(
        update_poll.sync_detailed(pid, client=s.admin("invite"), body=PollPatch(vote_changes=True)),
        200,
        Poll,
        "patch voteChanges",
    )
    check(poll.vote_changes is True and poll.duplicate_check.value == "none", "voteChanges changed", poll)
    poll = expect(get_poll.sync_detailed(pid, client=s.anon), 200, Poll, "read after patch voteChanges")
    check(poll.vote_changes is True, "voteChanges as patched", poll.vote_changes)


def step_patch(s: State) -> None:
    pid = s.polls["private"].id
    # The body is typed; the generated client sends it as application/json.
    closed = PollPatch(closed=True)
    expect(update_poll.sync_detailed(pid, client=s.anon, body=closed), 401, Problem, "patch without token")
    poll = expect(update_poll.sync_detailed(pid, client=s.admin("private"), body=closed), 200, Poll, "close")
    check(poll.status.value == "closed", "closed", poll.status)

    longer = PollPatch(closed=False, expiry_days=PollPatchExpiryDays.VALUE_30)
    poll = expect(update_poll.sync_detailed(pid, client=s.admin("private"), body=longer), 200, Poll, "reopen+expiry")
    check(poll.status.value == "open" and poll.expires_on > s.polls["private"].expires_on, "reopened, later", poll)

    french = LanguageVersion(
        title="Déjeuner",
        questions=[
            LanguageVersionQuestionsItem(label="Choisissez", options=["Pizza", "Sushi", "Salade"]),
            LanguageVersionQuestionsItem(label="Et à boire ?", options=["Eau", "Jus"]),
        ],
    )
    translations = PollPatchTranslations()
    translations["fr"] = french
    poll = expect(
        update_poll.sync_detailed(pid, client=s.admin("private"), body=PollPatch(translations=translations)),
        200,
        Poll,
        "set French version",
    )
    check("fr" in poll.translations.additional_properties, "French version stored", poll.translations)
    check(poll.translations["fr"].title == "Déjeuner", "French title", poll.translations["fr"])

    removal = PollPatchTranslations()
    removal["fr"] = None
    poll = expect(
        update_poll.sync_detailed(pid, client=s.admin("private"), body=PollPatch(translations=removal)),
        200,
        Poll,
        "remove French version",
    )
    check("fr" not in poll.translations.additional_properties, "French version removed", poll.translations)

    mismatched = PollPatchTranslations()
    mismatched["de"] = LanguageVersion(title="Mittag", questions=[french.questions[0]])
    problem = expect(
        update_poll.sync_detailed(pid, client=s.admin("private"), body=PollPatch(translations=mismatched)),
        422,
        ValidationProblem,
        "version with too few questions",
    )
    check(problem.errors, "422 lists errors", problem)


def step_delete(s: State) -> None:
    for name, created in s.polls.items():
        expect(delete_poll.sync_detailed(created.id, client=s.wrong_admin()), 401, Problem, f"delete {name}, wrong token")
        resp = delete_poll.sync_detailed(created.id, client=s.admin(name))
        check(resp.status_code == 204, f"delete {name}: 204", (resp.status_code, resp.content[:300]))
        print(f"ok  delete {name}: 204")
        expect(get_poll.sync_detailed(created.id, client=s.anon), 404, Problem, f"read {name} after delete")
        expect(get_results.sync_detailed(created.id, client=s.admin(name)), 404, Problem, f"results of {name} after delete")
        expect(
            update_poll.sync_detailed(created.id, client=s.admin(name), body=PollPatch(closed=True)),
            404,
            Problem,
            f"patch {name} after delete",
        )
        expect(delete_poll.sync_detailed(created.id, client=s.admin(name)), 404, Problem, f"delete {name} again")


STEPS = [
    step_document,
    step_create,
    step_create_invalid,
    step_read,
    step_results,
    step_question_types,
    step_schedule,
    step_settings,
    step_invites,
    step_patch,
    step_delete,
]


def main() -> None:
    base = sys.argv[1]
    state = State(base=base, anon=Client(base_url=base, raise_on_unexpected_status=True))
    for step in STEPS:
        step(state)
    print(f"python client: {len(STEPS)} steps passed")


if __name__ == "__main__":
    main()
