//! A form's file field (a picture, sound or video with its alt text):
//! each question and the poll itself on the creation form, the admin
//! page's media form.
//!
//! Promises: a file kept from an earlier send shows as a card with a way
//! to remove it; the server decides what a file is by its content alone
//! (`accept` only helps the picker).

use maud::{Markup, html};

use super::fields::{described, errors_of, text_field};
use crate::domain::Problem;
use crate::web::form::{Problems, problem_text};
use crate::web::layout::Ctx;
use crate::web::uploads::{SlotDraft, Uploads, human_size, kind_name, mib};

/// A problem with an alt text or caption, in the reader's words.
pub fn alt_text(t: &crate::i18n::Catalogue, problem: &Problem) -> String {
    match problem {
        Problem::Required => t.err_alt_required.to_owned(),
        other => problem_text(t, other),
    }
}

/// Which file field of a form, and the summary it is folded under. `None`
/// shows it as is: a section that holds only this field (the admin page's)
/// already says what it is, and a summary saying it again ("File" above a
/// field labelled "File") would only repeat it.
pub struct SlotField<'a> {
    pub prefix: &'a str,
    pub legend: Option<&'a str>,
}

/// A form's file field named `prefix`, with the file it holds, if any. Its
/// field ids are `f-{prefix}` and `f-{prefix}-alt`.
pub fn media_fieldset(
    ctx: &Ctx,
    field: SlotField,
    m: &SlotDraft,
    p: &Problems,
    focus: Option<&str>,
    uploads: &Uploads,
) -> Markup {
    let SlotField { prefix, legend } = field;
    let t = ctx.t;
    let id = format!("f-{prefix}");
    let errors = p.of(&id);
    let limits = &uploads.limits;
    let hint = (t.media_file_hint)(mib(limits.image_bytes), mib(limits.audio_bytes), mib(limits.video_bytes));
    // Folded away unless it holds something: a form of twenty questions
    // stays readable. `<details>` needs no script.
    let open = m.staged.is_some() || !errors.is_empty() || !m.alt.is_empty() || !p.of(&format!("{id}-alt")).is_empty();
    let fields = html! {
            div.media-fields {
                @if let Some(staged) = &m.staged {
                    // The file kept from an earlier send, as a card: what it
                    // is and a way to remove it. (The browser's own field
                    // below says "No file chosen": it only offers another.)
                    @let clean = &staged.clean;
                    div.held-file id=(format!("{id}-held")) {
                        // A picture shows itself (decorative: the text beside
                        // it says what it is); a sound or video, its glyph.
                        @if clean.kind == crate::media::Kind::Image {
                            img.held-thumb src=(format!("/held/{}", staged.reference)) alt="" decoding="async";
                        } @else {
                            (kind_glyph(clean.kind))
                        }
                        p {
                            strong { (t.media_kept) } br;
                            span.held-what id=(format!("{id}-held-what")) {
                                (kind_name(t, clean.kind))
                                @if let (Some(w), Some(h)) = (clean.width, clean.height) { " · " (w) "\u{A0}×\u{A0}" (h) }
                                " · " (human_size(clean.bytes.len()))
                            }
                        }
                        button.secondary.remove type="submit" name="action" value=(format!("media-drop-{prefix}")) formnovalidate
                            aria-describedby=(format!("{id}-held-what")) { (t.media_drop) }
                    }
                    input type="hidden" name=(format!("{prefix}-held")) value=(staged.reference);
                }
                div.field {
                    label for=(id) { @if m.staged.is_some() { (t.media_replace) } @else { (t.media_file) } }
                    p.hint id=(format!("{id}-hint")) { (hint) }
                    (errors_of(&id, &errors))
                    input type="file" id=(id) name=(prefix) accept=(ACCEPT)
                        aria-invalid=[(!errors.is_empty()).then_some("true")]
                        aria-describedby=[described(&id, true, &errors)]
                        autofocus[focus == Some(id.as_str())];
                }
                (text_field(&format!("{id}-alt"), &format!("{prefix}-alt"), t.media_alt, &m.alt, Some(t.media_alt_hint), crate::domain::ALT.max_chars, p, focus))
            }
    };
    match legend {
        Some(legend) => html! { details.media-slot open[open] { summary { (legend) } (fields) } },
        None => fields,
    }
}

/// A small drawing of a file's kind (picture, sound, video), beside the
/// kept file's name; decoration only.
fn kind_glyph(kind: crate::media::Kind) -> Markup {
    use crate::media::Kind;
    let d = match kind {
        Kind::Image => "M4 6h24v20H4z M8 22l6-8 5 6 3-4 4 6z",
        Kind::Audio => "M12 8v13a3 3 0 1 1-2-2.8V8l12-3v13a3 3 0 1 1-2-2.8V8.5z",
        Kind::Video => "M4 8h17v16H4z M21 14l7-4v12l-7-4z",
    };
    html! {
        svg.kind-glyph viewBox="0 0 32 32" aria-hidden="true" focusable="false" {
            path d=(d) {}
        }
    }
}

/// What the file pickers offer; the server still decides by content alone.
const ACCEPT: &str = "image/jpeg,image/png,image/webp,image/gif,audio/mpeg,audio/ogg,audio/mp4,audio/webm,\
                      video/mp4,video/webm,.mp3,.ogg,.opus,.m4a,.mp4,.webm";
