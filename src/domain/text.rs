//! The bounds of every text and list a poll holds, and the text types that
//! keep them (`Title`, `Label`, `OptionText`): one rule value each, which
//! the validators and the OpenAPI document (`schema.rs`) both read.

use super::*;

/// Bounds of one kind of user text: at most `max_chars` Unicode scalar values
/// (as sent and as stored), at least one visible character, no control
/// characters, line or paragraph separators or bidirectional controls, and
/// at most [`MAX_MARKS`] combining marks on one character. Stored in Unicode
/// Normalization Form C (NFC), trimmed.
#[derive(Clone, Copy, Debug)]
pub struct TextRule {
    pub max_chars: usize,
}

pub const TITLE: TextRule = TextRule { max_chars: 200 };
pub const LABEL: TextRule = TextRule { max_chars: 500 };
pub const OPTION: TextRule = TextRule { max_chars: 200 };

/// Bounds of a list.
#[derive(Clone, Copy, Debug)]
pub struct CountRule {
    pub min: usize,
    pub max: usize,
    pub list: List,
}

pub const QUESTIONS: CountRule = CountRule { min: 1, max: 20, list: List::Questions };
pub const OPTIONS: CountRule = CountRule { min: 2, max: 12, list: List::Options };

/// The only allowed lifetimes of a poll, in days.
pub const EXPIRY_DAYS: [u16; 5] = [7, 30, 90, 365, 730];

/// Largest accepted JSON request body.
pub const MAX_JSON_BODY: usize = 256 * 1024;

/// What is trimmed around a text: Unicode white space plus U+FEFF (the
/// zero-width no-break space), which ECMA-262's `\s` (used by the schema's
/// pattern) counts as blank too, so schema and validator agree.
pub(super) fn is_blank(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The control characters refused in texts, as an ECMA-262 character class body.
pub(super) const CONTROL_CLASS: &str = "\\u0000-\\u001F\\u007F-\\u009F";

/// U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR, refused in texts
/// as line breaks are: every text is one line. They are not control
/// characters (their categories are `Zl` and `Zp`), so `char::is_control`
/// lets them through.
pub(super) const SEPARATORS: [char; 2] = ['\u{2028}', '\u{2029}'];

/// The most combining marks (general category `M`: `Mn`, `Mc`, `Me`) one
/// character may carry, counted in a row after NFC has composed what it
/// can. Written text needs few: Vietnamese at most two on a letter, Hebrew
/// with points and cantillation or a Tibetan stack five or six; an emoji
/// keycap two. Stacks of dozens ("Zalgo" text: the audit's letter had 190)
/// draw over the lines around them and hide what is written there. Unicode's
/// Stream-Safe Text Format allows 30 non-starters, a bound for buffers
/// rather than for what a reader can make out; 8 leaves room for every
/// script and none for a tower.
pub const MAX_MARKS: usize = 8;

/// The bidirectional embedding, override and isolate controls refused in
/// texts: they can make a poll's text read differently from what is stored.
pub(super) const BIDI: [(char, char); 2] = [('\u{202a}', '\u{202e}'), ('\u{2066}', '\u{2069}')];

/// Characters that draw a blank yet have no Unicode property saying so
/// (they are symbols, `So`): U+2800 BRAILLE PATTERN BLANK and U+1D159
/// MUSICAL SYMBOL NULL NOTEHEAD. The only two named in the audit that
/// [`is_invisible`]'s properties do not cover.
pub(super) const BLANK_GLYPHS: [char; 2] = ['\u{2800}', '\u{1d159}'];

/// Whether `c` shows nothing by itself: white space, a default-ignorable
/// code point (Unicode's `Default_Ignorable_Code_Point`: U+200B, U+3164,
/// the tag characters U+E0000–U+E0FFF…), a format character (general
/// category `Cf`: U+FFF9, U+1D173, U+1BCA0, U+13430…) or a blank glyph. The
/// properties come from ICU4X's compiled Unicode data, so a new Unicode
/// version updates them with the crate rather than by hand. A text made only
/// of these is [`Problem::Invisible`]; inside a text they are kept, since
/// there they carry meaning (emoji sequences, right-to-left marks).
pub fn is_invisible(c: char) -> bool {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
    use icu_properties::{CodePointMapData, CodePointSetData};
    is_blank(c)
        || BLANK_GLYPHS.contains(&c)
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointMapData::<GeneralCategory>::new().get(c) == GeneralCategory::Format
}

/// The invisible characters of [`is_invisible`] other than white space
/// (the schema's `\s` stands for that), as sorted, merged ranges.
pub(super) fn invisible_ranges() -> Vec<(u32, u32)> {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
    use icu_properties::{CodePointMapData, CodePointSetData};
    let mut all: Vec<(u32, u32)> = CodePointSetData::new::<DefaultIgnorableCodePoint>()
        .iter_ranges()
        .chain(CodePointMapData::<GeneralCategory>::new().iter_ranges_for_value(GeneralCategory::Format))
        .map(|r| (*r.start(), *r.end()))
        .chain(BLANK_GLYPHS.iter().map(|&c| (u32::from(c), u32::from(c))))
        .collect();
    all.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(all.len());
    for (lo, hi) in all {
        match merged.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

/// Whether `c` is a combining mark (general category `Mn`, `Mc` or `Me`).
fn is_mark(c: char) -> bool {
    use icu_properties::CodePointMapData;
    use icu_properties::props::GeneralCategory;
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::NonspacingMark | GeneralCategory::SpacingMark | GeneralCategory::EnclosingMark
    )
}

/// The longest run of combining marks in `s`, on one base character:
/// characters that show nothing (a zero-width joiner, a variation
/// selector) neither end a run nor count, or marks split by them would
/// stack on one letter all the same.
fn most_marks(s: &str) -> usize {
    use icu_properties::CodePointSetData;
    use icu_properties::props::DefaultIgnorableCodePoint;
    let ignorable = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    let (mut run, mut most) = (0, 0);
    for c in s.chars() {
        if is_mark(c) {
            run += 1;
        } else if !ignorable.contains(c) {
            run = 0;
        }
        most = most.max(run);
    }
    most
}

/// The Unicode TS #39 confusable skeleton of `s`: two texts with the same
/// skeleton look alike (`Pizza` with a Latin or a Cyrillic `P`, `Yes` with
/// or without a zero-width space, `rn` and `m`). The skeleton drops
/// default-ignorable code points and maps each character to its prototype
/// in Unicode's confusables.txt (the `unicode-security` crate's data);
/// case stays (`Yes` and `yes` differ), except where the two cases look
/// alike (`I` and `l`). For comparing only: it is never shown or stored.
pub fn skeleton(s: &str) -> String {
    unicode_security::skeleton(s).collect()
}

/// The options of one question accepted so far, to refuse one that equals
/// an earlier option or looks like it ([`skeleton`]).
#[derive(Default)]
pub(super) struct DistinctOptions(Vec<(usize, OptionText, String)>);

impl DistinctOptions {
    /// Takes option `index` (its place in the list as sent), or says which
    /// earlier option it equals or looks like.
    pub(super) fn take(&mut self, index: usize, option: OptionText) -> Result<(), Problem> {
        let shape = skeleton(option.as_str());
        if let Some((earlier, ..)) = self.0.iter().find(|(_, o, _)| *o == option) {
            return Err(Problem::DuplicateOption { option: *earlier });
        }
        if let Some((earlier, ..)) = self.0.iter().find(|(.., s)| *s == shape) {
            return Err(Problem::LookalikeOption { option: *earlier });
        }
        self.0.push((index, option, shape));
        Ok(())
    }

    pub(super) fn into_options(self) -> Vec<OptionText> {
        self.0.into_iter().map(|(_, o, _)| o).collect()
    }
}

pub(super) fn in_ranges(c: char, ranges: &[(char, char)]) -> bool {
    ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// One character of a schema pattern's class: `\uXXXX` in the Basic
/// Multilingual Plane; beyond it the character itself, which ECMA-262 (in
/// Unicode mode, as JSON Schema validators run patterns) and Python's `re`
/// both read as one code point, where each spells an escape its own way.
pub(super) fn class_char(c: u32) -> String {
    match char::from_u32(c) {
        Some(ch) if c > 0xffff => ch.to_string(),
        _ => format!("\\u{c:04X}"),
    }
}

/// An ECMA-262 character class body for `ranges`.
pub(super) fn class(ranges: impl IntoIterator<Item = (u32, u32)>) -> String {
    ranges
        .into_iter()
        .map(|(lo, hi)| if lo == hi { class_char(lo) } else { format!("{}-{}", class_char(lo), class_char(hi)) })
        .collect()
}

impl TextRule {
    /// Checks `v` and returns the trimmed text.
    pub fn check(&self, v: &Value) -> Result<String, Problem> {
        let Some(s) = v.as_str() else {
            return Err(Problem::NotAString);
        };
        self.check_text(s)
    }

    /// [`TextRule::check`] for a text that is known to be one (a form field).
    pub fn check_text(&self, s: &str) -> Result<String, Problem> {
        use unicode_normalization::UnicodeNormalization;
        // The bound holds for the text as sent (the schema's maxLength) and
        // as stored: NFC composes most marks with their letters, but writes
        // a few characters as two or three (U+0958 DEVANAGARI LETTER QA is
        // U+0915 U+093C), so a text can grow.
        if s.chars().count() > self.max_chars {
            return Err(Problem::TooLong { max: self.max_chars });
        }
        let s: String = s.nfc().collect();
        if s.chars().count() > self.max_chars {
            return Err(Problem::TooLong { max: self.max_chars });
        }
        if s.chars().any(char::is_control) {
            return Err(Problem::ControlCharacter);
        }
        if s.contains(SEPARATORS) {
            return Err(Problem::LineSeparator);
        }
        if s.chars().any(|c| in_ranges(c, &BIDI)) {
            return Err(Problem::BidiControl);
        }
        if most_marks(&s) > MAX_MARKS {
            return Err(Problem::TooManyMarks { max: MAX_MARKS });
        }
        let t = s.trim_matches(is_blank);
        if t.is_empty() {
            return Err(Problem::Blank);
        }
        if t.chars().all(is_invisible) {
            return Err(Problem::Invisible);
        }
        Ok(t.to_owned())
    }

    /// The JSON Schema of a text under this rule.
    pub fn schema(&self, description: &str) -> Value {
        let bidi = class(BIDI.iter().map(|&(lo, hi)| (u32::from(lo), u32::from(hi))));
        // The Basic Multilingual Plane only: an astral character in a class
        // breaks regex engines that do not run in Unicode mode (Spectral's
        // JavaScript does not); the astral invisibles are named in words.
        let ignorable =
            class(invisible_ranges().into_iter().filter(|&(lo, _)| lo <= 0xffff).map(|(lo, hi)| (lo, hi.min(0xffff))));
        let separators = class(SEPARATORS.iter().map(|&c| (u32::from(c), u32::from(c))));
        let allowed = format!("[^{CONTROL_CLASS}{separators}{bidi}]");
        let visible = format!("[^\\s{CONTROL_CLASS}{ignorable}]");
        json!({
            "type": "string",
            "minLength": 1,
            "maxLength": self.max_chars,
            "pattern": format!("^{allowed}*{visible}{allowed}*$"),
            "description": format!("{description} At most {} characters, not blank and not made only of invisible characters (spaces, default-ignorable code points such as U+200B, format characters such as U+FFF9 and blank glyphs such as U+2800; beyond the Basic Multilingual Plane, which the pattern does not name, the tags U+E0000–U+E0FFF, U+1D173–U+1D17A, U+13430–U+1343F, U+1BCA0–U+1BCA3 and the like, refused all the same), no control characters, no line or paragraph separators (U+2028, U+2029) and no bidirectional controls (U+202A–U+202E, U+2066–U+2069); at most {} combining marks on one character, which the pattern does not state; stored in Unicode Normalization Form C (NFC), within the same bound, with surrounding spaces trimmed.", self.max_chars, MAX_MARKS),
        })
    }
}

impl CountRule {
    pub fn check(&self, len: usize) -> Result<(), Problem> {
        if len < self.min || len > self.max {
            Err(Problem::Count { list: self.list, min: self.min, max: self.max })
        } else {
            Ok(())
        }
    }
}

macro_rules! text_type {
    ($name:ident, $rule:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn parse(v: &Value) -> Result<$name, Problem> {
                $rule.check(v).map($name)
            }
            /// Parses a text typed in a form field.
            pub fn from_text(s: &str) -> Result<$name, Problem> {
                $rule.check_text(s).map($name)
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_type!(Title, TITLE, "A poll's title (or a language version's).");
text_type!(Label, LABEL, "A question's text.");
text_type!(OptionText, OPTION, "One answer option of a question.");

/// A JSON number written as a whole number: `7`, never `7.0` or `7e0`.
/// JSON Schema's data model cannot tell those apart, but a number has one
/// canonical form here, as every other field does: the others
/// are refused like any malformed value, and the schema's descriptions say
/// so.
pub fn whole_number(v: &Value) -> Option<i64> {
    v.as_i64()
}

/// A number sent by a form of ours (an option's index, a rank, a scale's
/// value), in the one form the form writes: ASCII digits without a sign,
/// spaces or leading zeros (`0` itself aside). `+1`, `01` and ` 1` parse as
/// numbers in Rust but are refused, so one answer has one spelling.
pub fn form_number(text: &str) -> Option<usize> {
    let canonical =
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}
