//! A poll: as submitted for creation (`NewPoll`, fully validated), a
//! language version, a change (`PollPatch`), and as stored (`Poll`).

use super::*;

/// A poll lifetime that is one of [`EXPIRY_DAYS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpiryDays(u16);

impl ExpiryDays {
    pub fn get(self) -> u16 {
        self.0
    }

    pub(super) fn parse(v: &Value) -> Result<ExpiryDays, Problem> {
        whole_number(v).ok_or(Problem::NotOneOf(Choices::ExpiryDays)).and_then(ExpiryDays::try_from)
    }

    /// Parses a number of days typed or chosen in a form.
    pub fn from_text(s: &str) -> Result<ExpiryDays, Problem> {
        form_number(s)
            .and_then(|n| i64::try_from(n).ok())
            .ok_or(Problem::NotOneOf(Choices::ExpiryDays))
            .and_then(ExpiryDays::try_from)
    }
}

impl TryFrom<i64> for ExpiryDays {
    type Error = Problem;
    fn try_from(n: i64) -> Result<ExpiryDays, Problem> {
        EXPIRY_DAYS
            .into_iter()
            .find(|&d| i64::from(d) == n)
            .map(ExpiryDays)
            .ok_or(Problem::NotOneOf(Choices::ExpiryDays))
    }
}

/// A poll as submitted for creation, fully validated.
#[derive(Clone, Debug)]
pub struct NewPoll {
    pub title: Title,
    pub lang: Lang,
    pub expiry: ExpiryDays,
    pub visibility: ResultsVisibility,
    /// The day voting ends, if any (checked by [`NewPoll::check_on`]).
    pub closes_on: Option<Day>,
    pub shuffle_options: bool,
    pub duplicate_check: DuplicateCheck,
    /// Whether a voter gets a receipt with which to change or withdraw
    /// their own ballot while the poll is open (`voteChanges`, default true).
    pub vote_changes: bool,
    pub questions: Vec<Question>,
}

/// One language version of a poll: the same structure in another language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguageVersion {
    pub title: Title,
    pub questions: Vec<VersionQuestion>,
}

/// A validated PATCH: each key is optional, at least one is present.
#[derive(Clone, Debug, Default)]
pub struct PollPatch {
    pub closed: Option<bool>,
    pub expiry: Option<ExpiryDays>,
    pub visibility: Option<ResultsVisibility>,
    /// `Some(None)` removes the deadline.
    pub closes_on: Option<Option<Day>>,
    pub shuffle_options: Option<bool>,
    pub duplicate_check: Option<DuplicateCheck>,
    pub vote_changes: Option<bool>,
    /// `None` removes that language version.
    pub translations: BTreeMap<Lang, Option<LanguageVersion>>,
    /// The title in the poll's own language.
    pub title: Option<Title>,
    /// The whole list of questions in the poll's own language, parsed as on
    /// creation. On a poll with responses only its texts may differ from
    /// the poll's ([`PollPatch::restructures`]; the store's writer decides,
    /// in the change's own transaction); on a poll without, it may be any
    /// list: the counts start again in its layout, and the language
    /// versions go, but for those this patch gives (checked against it).
    pub questions: Option<Vec<Question>>,
    /// Set by a form that added or removed questions or answers (the admin
    /// page's): its list is then a new structure even where its shape
    /// matches the old one (a question removed and another of the same
    /// type added is no text edit). Not an API field: the API's list is
    /// positional, question `i` replacing question `i`.
    pub reshaped: bool,
}

/// The structure of an existing poll that a language version must match.
pub struct Shape<'a> {
    pub lang: Lang,
    pub questions: &'a [Question],
    pub expires_on: Day,
    pub closes_on: Option<Day>,
}

/// Collects field errors while a body is walked, so a client sees them all at once.
#[derive(Default)]
pub(super) struct Errors(pub(super) Vec<FieldError>);

impl Errors {
    pub(super) fn push(&mut self, path: FieldPath, problem: Problem) {
        self.0.push(FieldError { path, problem });
    }

    /// Records `r`'s problem at `path` and returns its value, if any.
    pub(super) fn take<T>(&mut self, path: FieldPath, r: Result<T, Problem>) -> Option<T> {
        r.map_err(|p| self.push(path, p)).ok()
    }

    pub(super) fn finish<T>(self, value: Option<T>) -> Result<T, Vec<FieldError>> {
        match value {
            Some(v) if self.0.is_empty() => Ok(v),
            _ if self.0.is_empty() => Err(vec![FieldError::new(FieldPath::root(), Problem::InvalidBody)]),
            _ => Err(self.0),
        }
    }
}

/// Checks that `v` is an object with only `allowed` keys and all `required` ones.
pub(super) fn object<'a>(
    v: &'a Value,
    at: &FieldPath,
    allowed: &'static [&'static str],
    required: &[Key],
    errs: &mut Errors,
) -> Option<&'a Map<String, Value>> {
    let Some(obj) = v.as_object() else {
        errs.push(at.clone(), Problem::NotAnObject);
        return None;
    };
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            errs.push(at.name(key), Problem::UnknownField { allowed });
        }
    }
    for key in required {
        if !obj.contains_key(key.name()) {
            errs.push(at.key(*key), Problem::Required);
        }
    }
    Some(obj)
}

/// The value of `key` in `obj`, with its path.
pub(super) fn field<'a>(obj: &'a Map<String, Value>, at: &FieldPath, key: Key) -> Option<(&'a Value, FieldPath)> {
    obj.get(key.name()).map(|v| (v, at.key(key)))
}

/// Parses a list of option texts at `at`: distinct after NFC and trimming,
/// and none looking like another ([`DistinctOptions`]).
pub(super) fn options(v: &Value, at: &FieldPath, errs: &mut Errors) -> Option<Vec<OptionText>> {
    let Some(items) = v.as_array() else {
        errs.push(at.clone(), Problem::NotAStringList);
        return None;
    };
    errs.take(at.clone(), OPTIONS.check(items.len()))?;
    distinct_options(items.iter().map(OptionText::parse), at, errs)
}

/// The parsed options of one question, each at `at[i]`, refused where a
/// text is invalid, equals an earlier option or looks like it.
pub(super) fn distinct_options(
    parsed: impl Iterator<Item = Result<OptionText, Problem>>,
    at: &FieldPath,
    errs: &mut Errors,
) -> Option<Vec<OptionText>> {
    let mut out = DistinctOptions::default();
    let mut ok = true;
    for (i, o) in parsed.enumerate() {
        ok &= errs.take(at.index(i), o.and_then(|o| out.take(i, o))).is_some();
    }
    ok.then(|| out.into_options())
}

/// Parses the `questions` array at `at`, each item with `item`.
pub(super) fn question_list<T>(
    v: &Value,
    at: &FieldPath,
    errs: &mut Errors,
    mut item: impl FnMut(&Value, &FieldPath, &mut Errors) -> Option<T>,
) -> Option<Vec<T>> {
    let Some(items) = v.as_array() else {
        errs.push(at.clone(), Problem::NotAQuestionList);
        return None;
    };
    errs.take(at.clone(), QUESTIONS.check(items.len()))?;
    let parsed: Vec<Option<T>> = items.iter().enumerate().map(|(i, q)| item(q, &at.index(i), errs)).collect();
    parsed.into_iter().collect()
}

/// `true`/`false` at `key`, or `default` when absent.
pub(super) fn boolean(obj: &Map<String, Value>, key: Key, errs: &mut Errors) -> Option<Option<bool>> {
    boolean_at(obj, &FieldPath::root(), key, errs)
}

/// [`boolean`] in the object at `at`.
pub(super) fn boolean_at(
    obj: &Map<String, Value>,
    at: &FieldPath,
    key: Key,
    errs: &mut Errors,
) -> Option<Option<bool>> {
    match obj.get(key.name()) {
        None => Some(None),
        Some(Value::Bool(b)) => Some(Some(*b)),
        Some(_) => {
            errs.push(at.key(key), Problem::NotABoolean);
            None
        }
    }
}

impl NewPoll {
    pub const FIELDS: [&'static str; 10] = [
        "title",
        "lang",
        "expiryDays",
        "resultsPublic",
        "resultsVisibility",
        "closesOn",
        "shuffleOptions",
        "duplicateCheck",
        "voteChanges",
        "questions",
    ];
    pub const REQUIRED: [&'static str; 4] = ["title", "lang", "expiryDays", "questions"];
    const REQUIRED_KEYS: [Key; 4] = [Key::Title, Key::Lang, Key::ExpiryDays, Key::Questions];

    /// Validates a creation body, reporting every invalid field.
    pub fn from_json(v: &Value) -> Result<NewPoll, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = NewPoll::walk(v, &mut errs, None);
        errs.finish(parsed)
    }

    /// [`NewPoll::from_json`] with the rules of the day of creation too
    /// ([`NewPoll::check_on`]), so that a body's answer lists every problem
    /// at once: a deadline in the past beside a blank title, say.
    pub fn from_json_on(v: &Value, today: Day) -> Result<NewPoll, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = NewPoll::walk(v, &mut errs, Some(today));
        errs.finish(parsed)
    }

    pub(super) fn walk(v: &Value, errs: &mut Errors, today: Option<Day>) -> Option<NewPoll> {
        let root = FieldPath::root();
        let obj = object(v, &root, &NewPoll::FIELDS, &NewPoll::REQUIRED_KEYS, errs)?;
        let title = field(obj, &root, Key::Title).and_then(|(t, p)| errs.take(p, Title::parse(t)));
        let lang = field(obj, &root, Key::Lang).and_then(|(l, p)| errs.take(p, Lang::parse(l)));
        let expiry = field(obj, &root, Key::ExpiryDays).and_then(|(e, p)| errs.take(p, ExpiryDays::parse(e)));
        let visibility = settings::visibility(obj, true, errs);
        let closes_on = settings::closes_on(obj, false, errs);
        let shuffle = boolean(obj, Key::ShuffleOptions, errs);
        let duplicate_check = settings::duplicate_check(obj, errs);
        let vote_changes = boolean(obj, Key::VoteChanges, errs);
        let questions = field(obj, &root, Key::Questions).and_then(|(q, p)| question_list(q, &p, errs, question));
        let deadline = closes_on.flatten().flatten().zip(expiry).zip(today);
        if let Some(((day, expiry), today)) = deadline
            && let Err(p) = settings::check_deadline(day, today, today.plus_days(expiry.get()))
        {
            errs.push(Key::ClosesOn.into(), p);
            return None;
        }
        Some(NewPoll {
            title: title?,
            lang: lang?,
            expiry: expiry?,
            visibility: visibility?.unwrap_or_default(),
            closes_on: closes_on?.flatten(),
            shuffle_options: shuffle?.unwrap_or(false),
            duplicate_check: duplicate_check?.unwrap_or_default(),
            vote_changes: vote_changes?.unwrap_or(true),
            questions: questions?,
        })
    }

    /// The rules that depend on the day of creation: a deadline lies after
    /// `today` and before the day the poll will expire.
    pub fn check_on(&self, today: Day) -> Result<(), Vec<FieldError>> {
        match self.closes_on {
            Some(day) => settings::check_deadline(day, today, today.plus_days(self.expiry.get()))
                .map_err(|p| vec![FieldError::new(Key::ClosesOn, p)]),
            None => Ok(()),
        }
    }
}

impl LanguageVersion {
    pub(super) fn walk(v: &Value, at: &FieldPath, errs: &mut Errors) -> Option<LanguageVersion> {
        let obj = object(v, at, &["title", "questions"], &[Key::Title, Key::Questions], errs)?;
        let title = field(obj, at, Key::Title).and_then(|(t, p)| errs.take(p, Title::parse(t)));
        let questions = field(obj, at, Key::Questions).and_then(|(q, p)| question_list(q, &p, errs, version_question));
        Some(LanguageVersion { title: title?, questions: questions? })
    }

    /// Validates one language version given as JSON (as `pollctl` reads it
    /// from a file), reporting paths under `translations.{lang}`.
    pub fn from_json(v: &Value, lang: Lang) -> Result<LanguageVersion, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = LanguageVersion::walk(v, &FieldPath::from(Key::Translations).lang(lang), &mut errs);
        errs.finish(parsed)
    }

    /// Validates one language version typed in a form: a title, and per
    /// question its label and options. Paths are under `translations.{lang}`,
    /// as for the API.
    pub fn from_texts(
        lang: Lang,
        title: &str,
        questions: &[QuestionTexts],
    ) -> Result<LanguageVersion, Vec<FieldError>> {
        let mut errs = Errors::default();
        let at = FieldPath::from(Key::Translations).lang(lang);
        let title = errs.take(at.key(Key::Title), Title::from_text(title));
        let list = at.key(Key::Questions);
        let mut parsed = Vec::with_capacity(questions.len());
        for (i, texts) in questions.iter().enumerate() {
            let q = list.index(i);
            let label = errs.take(q.key(Key::Label), Label::from_text(&texts.label));
            // A blank end label is one left out (the form always has the field).
            let mut end = |key: Key, text: &str| match text.trim_matches(is_blank) {
                "" => Some(None),
                t => errs.take(q.key(key), EndLabel::from_text(t)).map(Some),
            };
            let ends = end(Key::MinLabel, &texts.min_label).zip(end(Key::MaxLabel, &texts.max_label));
            let opts = distinct_options(
                texts.options.iter().map(|o| OptionText::from_text(o)),
                &q.key(Key::Options),
                &mut errs,
            );
            parsed.push(label.zip(opts).zip(ends).map(|((label, options), (min_label, max_label))| VersionQuestion {
                label,
                options,
                min_label,
                max_label,
            }));
        }
        let parsed: Option<Vec<VersionQuestion>> = parsed.into_iter().collect();
        let version = title.zip(parsed).map(|(title, questions)| LanguageVersion { title, questions });
        errs.finish(version)
    }

    /// Errors where this version's structure differs from the poll's.
    pub(super) fn mismatches(&self, questions: &[Question], at: &FieldPath) -> Vec<FieldError> {
        let list = at.key(Key::Questions);
        if self.questions.len() != questions.len() {
            return vec![FieldError::new(list, Problem::QuestionsUnlikePoll { expected: questions.len() })];
        }
        self.questions
            .iter()
            .zip(questions)
            .enumerate()
            .flat_map(|(i, (mine, theirs))| question::version_mismatches(mine, theirs, &list.index(i)))
            .map(|(path, problem)| FieldError::new(path, problem))
            .collect()
    }
}

impl PollPatch {
    pub const FIELDS: [&'static str; 10] = [
        "closed",
        "expiryDays",
        "resultsVisibility",
        "closesOn",
        "shuffleOptions",
        "duplicateCheck",
        "voteChanges",
        "translations",
        "title",
        "questions",
    ];

    /// Validates a PATCH body on its own (types, bounds, languages).
    pub fn from_json(v: &Value) -> Result<PollPatch, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = PollPatch::walk(v, &mut errs);
        errs.finish(parsed)
    }

    /// True when the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.closed.is_none()
            && self.expiry.is_none()
            && self.visibility.is_none()
            && self.closes_on.is_none()
            && self.shuffle_options.is_none()
            && self.duplicate_check.is_none()
            && self.vote_changes.is_none()
            && self.translations.is_empty()
            && self.title.is_none()
            && self.questions.is_none()
    }

    /// Where this patch's questions differ from `questions` (the poll's)
    /// in more than their texts ([`structure_changes`]): empty when it
    /// gives no questions or changes only texts. A poll with responses
    /// refuses a patch for which this is not empty (409).
    pub fn restructures(&self, questions: &[Question]) -> Vec<FieldError> {
        let Some(new) = self.questions.as_deref() else { return Vec::new() };
        let changes = structure_changes(questions, new);
        if changes.is_empty() && self.reshaped {
            return vec![FieldError::new(Key::Questions, Problem::FixedByResponses)];
        }
        changes
    }

    pub(super) fn walk(v: &Value, errs: &mut Errors) -> Option<PollPatch> {
        let root = FieldPath::root();
        let obj = object(v, &root, &PollPatch::FIELDS, &[], errs)?;
        if !obj.keys().any(|k| PollPatch::FIELDS.contains(&k.as_str())) {
            errs.push(root, Problem::NothingToChange { fields: &PollPatch::FIELDS });
            return None;
        }
        let closed = boolean(obj, Key::Closed, errs);
        let expiry = match field(obj, &root, Key::ExpiryDays) {
            None => Some(None),
            Some((e, p)) => errs.take(p, ExpiryDays::parse(e)).map(Some),
        };
        let translations = match obj.get(Key::Translations.name()) {
            None => Some(BTreeMap::new()),
            Some(t) => PollPatch::translations(t, errs),
        };
        let visibility = settings::visibility(obj, false, errs);
        let closes_on = settings::closes_on(obj, true, errs);
        let shuffle_options = boolean(obj, Key::ShuffleOptions, errs);
        let duplicate_check = settings::duplicate_check(obj, errs);
        let vote_changes = boolean(obj, Key::VoteChanges, errs);
        let title = match field(obj, &root, Key::Title) {
            None => Some(None),
            Some((t, p)) => errs.take(p, Title::parse(t)).map(Some),
        };
        let questions = match field(obj, &root, Key::Questions) {
            None => Some(None),
            Some((q, p)) => question_list(q, &p, errs, question).map(Some),
        };
        Some(PollPatch {
            closed: closed?,
            expiry: expiry?,
            visibility: visibility?,
            closes_on: closes_on?,
            shuffle_options: shuffle_options?,
            duplicate_check: duplicate_check?,
            vote_changes: vote_changes?,
            translations: translations?,
            title: title?,
            questions: questions?,
            reshaped: false,
        })
    }

    pub(super) fn translations(v: &Value, errs: &mut Errors) -> Option<BTreeMap<Lang, Option<LanguageVersion>>> {
        let at = FieldPath::from(Key::Translations);
        let Some(obj) = v.as_object() else {
            errs.push(at, Problem::NotKeyedByLanguage);
            return None;
        };
        if obj.is_empty() {
            errs.push(at, Problem::NoLanguage);
            return None;
        }
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (code, body) in obj {
            let Some(lang) = Lang::from_code(code) else {
                errs.push(at.name(code), Problem::UnknownLanguage);
                ok = false;
                continue;
            };
            if body.is_null() {
                out.insert(lang, None);
            } else if let Some(version) = LanguageVersion::walk(body, &at.lang(lang), errs) {
                out.insert(lang, Some(version));
            } else {
                ok = false;
            }
        }
        ok.then_some(out)
    }

    /// Checks the patch against the poll it applies to on `today`: a
    /// language version must not be in the poll's own language and must
    /// match its structure exactly (the questions this patch gives, if
    /// any); a deadline lies after today and not after the poll's expiry
    /// (as the patch leaves it).
    pub fn check_against(&self, shape: &Shape<'_>, today: Day) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let expires_on = self.expiry.map_or(shape.expires_on, |d| today.plus_days(d.get()));
        match self.closes_on {
            Some(Some(day)) => {
                // The poll's own day sent back unchanged (a form that shows
                // it, a client that read the poll) may have passed: only the
                // expiry still bounds it.
                let check = if Some(day) == shape.closes_on {
                    settings::check_before_expiry(day, expires_on)
                } else {
                    settings::check_deadline(day, today, expires_on)
                };
                if let Err(p) = check {
                    errors.push(FieldError::new(Key::ClosesOn, p));
                }
            }
            Some(None) => {}
            // A deadline that stays must still come before the new expiry;
            // one already passed is removed by reopening (see `reopens`).
            None => {
                if let Some(day) = shape.closes_on
                    && day >= expires_on
                    && !self.reopens_past(shape.closes_on, today)
                {
                    errors.push(FieldError::new(Key::ExpiryDays, Problem::ExpiresBeforeDeadline { closes_on: day }));
                }
            }
        }
        for (lang, version) in &self.translations {
            let at = FieldPath::from(Key::Translations).lang(*lang);
            if *lang == shape.lang {
                errors.push(FieldError::new(at, Problem::OwnLanguage));
                continue;
            }
            if let Some(v) = version {
                errors.extend(v.mismatches(self.questions.as_deref().unwrap_or(shape.questions), &at));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }

    /// Whether this patch reopens a poll whose deadline (`closes_on`) has
    /// passed on `today` without naming a new one: reopening then removes
    /// the passed deadline (docs/DECISIONS.md), or the poll would stay closed.
    pub fn reopens_past(&self, closes_on: Option<Day>, today: Day) -> bool {
        self.closed == Some(false) && self.closes_on.is_none() && settings::deadline_passed(closes_on, today)
    }
}

/// A poll as stored. The token is only present as its hash.
#[derive(Clone, Debug)]
pub struct Poll {
    pub id: crate::secret::PollId,
    pub token_hash: crate::secret::TokenHash,
    pub title: Title,
    pub lang: Lang,
    pub visibility: ResultsVisibility,
    /// Whether the poll takes no votes today: closed by its admin, or its
    /// deadline has come.
    pub closed: bool,
    /// The day voting ends, if the poll has a deadline.
    pub closes_on: Option<Day>,
    pub shuffle_options: bool,
    pub duplicate_check: DuplicateCheck,
    /// Voters get receipts to change or withdraw their ballot.
    pub vote_changes: bool,
    pub created_on: crate::day::Day,
    pub expires_on: crate::day::Day,
    /// The last day its title or questions changed after creation (shown
    /// to voters: "Edited on …"); `None` if they never did.
    pub edited_on: Option<Day>,
    /// How many times its questions changed in more than their texts (only
    /// while it had no response): a vote read against another structure is
    /// refused rather than counted against this one.
    pub restructured: u32,
    pub questions: Vec<Question>,
    pub translations: BTreeMap<Lang, LanguageVersion>,
    /// Media attached through the web form, poll's own first, then by question.
    pub media: Vec<MediaItem>,
}

impl Poll {
    pub fn shape(&self) -> Shape<'_> {
        Shape { lang: self.lang, questions: &self.questions, expires_on: self.expires_on, closes_on: self.closes_on }
    }

    /// The specification's `resultsPublic`: anyone may read the results, always.
    pub fn results_public(&self) -> bool {
        self.visibility.is_public()
    }

    /// Whether anyone may read the results now: public ones, and those
    /// shown once the poll is closed, when it is.
    pub fn results_open_to_all(&self) -> bool {
        match self.visibility {
            ResultsVisibility::Public => true,
            ResultsVisibility::AfterClose => self.closed,
            ResultsVisibility::AfterVote | ResultsVisibility::Private => false,
        }
    }

    /// The media item shown at `slot`, if any.
    pub fn media_at(&self, slot: Slot) -> Option<&MediaItem> {
        self.media.iter().find(|m| m.slot == slot)
    }

    /// The poll's text in `lang`: its language version if one exists, else
    /// the original.
    pub fn version(&self, lang: Lang) -> (Lang, &Title, Vec<Texts<'_>>) {
        match self.translations.get(&lang) {
            Some(v) if lang != self.lang => {
                let texts = v.questions.iter().zip(&self.questions).map(|(mine, q)| {
                    let mut t = mine.texts();
                    // A schedule's slots are the same in every language.
                    if !q.kind.has_option_texts() {
                        t.options = &q.options;
                    }
                    t
                });
                (lang, &v.title, texts.collect())
            }
            _ => (self.lang, &self.title, self.questions.iter().map(Question::texts).collect()),
        }
    }
}

/// The texts of one question in one language.
#[derive(Clone, Copy, Debug)]
pub struct Texts<'a> {
    pub label: &'a Label,
    pub options: &'a [OptionText],
    pub min_label: Option<&'a EndLabel>,
    pub max_label: Option<&'a EndLabel>,
}

/// Counters of a poll's responses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tallies {
    pub total: u64,
    /// Per question, its `option_tallies`: per option (single, multiple),
    /// first choices per option (ranked), or per value from `scaleMin` up
    /// (scale).
    pub votes: Vec<Vec<u64>>,
    /// Ballots that answered each question.
    pub answered: Vec<u64>,
    /// Per question, `pairwise[i][j]`: ballots ranking option i above j
    /// (empty for questions that are not ranked).
    pub pairwise: Vec<Vec<Vec<u64>>>,
    /// Responses per day, oldest first.
    pub by_day: Vec<(crate::day::Day, u64)>,
}
