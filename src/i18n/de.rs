//! Deutsch: förmliche Anrede („Sie“), Datumsformat „1. März 2025“,
//! geschütztes Leerzeichen vor dem Prozentzeichen (DIN 5008).

use super::{Catalogue, KeptRow};

const MONTHS: [&str; 12] = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];

const ROWS: [KeptRow; 10] = [
    (
        "Die Umfrage: Titel, Sprache, Fragen, Antwortmöglichkeiten, Sprachfassungen und Einstellungen",
        "Datenbank",
        "Bis zu ihrem Löschdatum oder bis die Person, die sie erstellt hat, sie löscht",
    ),
    (
        "Bilder, Audio und Videos der Umfrage, nachdem Standort, Kamera und andere versteckte Angaben entfernt wurden; nie ihre Dateinamen",
        "Datenbank",
        "Wie die Umfrage",
    ),
    ("Der Tag, an dem die Umfrage erstellt wurde, und ihr Löschdatum", "Datenbank", "Wie die Umfrage"),
    ("Ein Fingerabdruck (SHA-256) des Verwaltungsschlüssels, nie der Schlüssel selbst", "Datenbank", "Wie die Umfrage"),
    (
        "Jede Teilnahme: der Tag, an dem sie abgeschickt wurde, und die gewählte Antwort je Frage",
        "Datenbank",
        "Wie die Umfrage",
    ),
    ("Stimmenzahlen je Antwort und je Tag", "Datenbank", "Wie die Umfrage"),
    (
        "Zur Begrenzung neuer Umfragen: ein Fingerabdruck Ihrer Netzwerkadresse, berechnet mit einem geheimen Schlüssel, und die Zeitpunkte, zu denen Sie zuletzt Umfragen erstellt haben",
        "Nur im Arbeitsspeicher des Servers",
        "Höchstens zwei Stunden, danach wird auch der Schlüssel verworfen",
    ),
    (
        "Ein Zufallscode je bereits abgeschicktem Antwortformular, damit es nicht doppelt gezählt wird",
        "Nur im Arbeitsspeicher des Servers",
        "Höchstens bis zum Ende des folgenden Tages (UTC)",
    ),
    (
        "Die Umfragen, an denen Sie in diesem Browser teilgenommen haben, mit ihrem Löschdatum; am Tag einer Antwort auf eine Umfrage, die ihre Ergebnisse nach der Teilnahme zeigt, auch dieser Tag und der Code des gesendeten Formulars, den der Link zurück zu diesen Ergebnissen trägt",
        "Ihr Browser (localStorage), wird nie übertragen",
        "Bis zum Löschdatum der Umfrage oder bis Sie die Daten dieser Website löschen",
    ),
    (
        "Verwaltungslinks, die Sie in diesem Browser behalten wollten, mit Titel und Löschdatum der Umfrage",
        "Ihr Browser (localStorage), wird nie übertragen",
        "Bis zum Löschdatum der Umfrage, bis Sie sie auf der Startseite vergessen oder bis Sie die Daten dieser Website löschen",
    ),
];

pub const DE: Catalogue = Catalogue {
    lang_names: ["Englisch", "Französisch", "Deutsch", "Italienisch"],
    date: |y, m, d| format!("{d}. {} {y}", MONTHS[usize::from(m.clamp(1, 12)) - 1]),
    percent: |p, d| format!("{}\u{A0}%", format!("{p:.d$}").replace('.', ",")),

    skip_link: "Zum Inhalt springen",
    nav_label: "Hauptnavigation",
    nav_create: "Neue Umfrage",
    nav_privacy: "Datenschutz",
    lang_switch_label: "Sprache",
    footer: "Anonyme Umfragen ohne Konto, ohne Cookies und ohne Tracking.",

    create_title: "Umfrage erstellen",
    create_intro: "Geben Sie Ihrer Umfrage einen Titel und mindestens eine Frage mit zwei Antworten. Leere Zeilen werden nicht berücksichtigt.",
    field_title: "Titel",
    field_title_hint: "Höchstens 200 Zeichen.",
    field_lang: "Sprache der Umfrage",
    field_lang_hint: "Die Sprache, in der Sie die Fragen schreiben. Fassungen in anderen Sprachen können Sie später hinzufügen.",
    field_expiry: "Umfrage löschen nach",
    field_expiry_hint: "An diesem Tag werden die Umfrage und alle Antworten endgültig gelöscht.",
    expiry_option: |d| match d {
        365 => "1 Jahr".into(),
        730 => "2 Jahren".into(),
        _ => format!("{d} Tagen"),
    },
    field_results: "Wer darf die Ergebnisse sehen?",
    results_public: "Alle, die den Link haben",
    results_private: "Nur Sie, mit dem Verwaltungslink",
    questions_heading: "Fragen",
    questions_hint: "Bis zu 20 Fragen. Eine Frage, deren Antworten man wählt oder ordnet, hat 2 bis 12 davon; eine Skala hat keine.",
    question_legend: |n| format!("Frage {n}"),
    field_question: "Frage",
    field_option: |n| format!("Antwort {n}"),
    add_option: "Antwort hinzufügen",
    add_question: "Frage hinzufügen",
    remove_question: "Diese Frage entfernen",
    move_up: "Nach oben",
    submit_create: "Umfrage erstellen",
    errors_heading: "Die Umfrage wurde nicht erstellt. Bitte prüfen Sie Folgendes:",

    err_required: "Bitte füllen Sie dieses Feld aus.",
    err_too_long: |n| format!("Bitte verwenden Sie höchstens {n} Zeichen."),
    err_control: "Zeilenumbrüche und Tabulatoren sind hier nicht erlaubt.",
    err_bidi: "Zeichen, die die Schreibrichtung umkehren (etwa U+202E), sind hier nicht erlaubt.",
    err_separator: "Zeilen- und Absatztrennzeichen (U+2028, U+2029) sind hier nicht erlaubt: Der Text steht in einer Zeile.",
    err_marks: |n| format!("Zu viele Akzente oder Zeichen auf einem Buchstaben: Höchstens {n} sind erlaubt."),
    err_invisible: "Dieses Feld zeigt nichts an: Es enthält nur unsichtbare Zeichen. Bitte sichtbaren Text eingeben.",
    err_questions_count: |min, max| {
        format!("Eine Umfrage braucht mindestens {min} Frage mit mindestens zwei Antworten und höchstens {max} Fragen.")
    },
    err_options_count: |min, max| format!("Eine Frage braucht zwischen {min} und {max} Antworten."),
    err_duplicate: |n| format!("Diese Antwort ist dieselbe wie Antwort {n} dieser Frage."),
    err_lookalike: |n| {
        format!(
            "Diese Antwort sieht genauso aus wie Antwort {n} dieser Frage, obwohl ihre Zeichen andere sind (ein Buchstabe aus einem anderen Alphabet oder ein unsichtbares Zeichen). Teilnehmende könnten sie nicht unterscheiden: Bitte machen Sie sie sichtbar verschieden."
        )
    },
    err_choice: "Bitte wählen Sie einen der angebotenen Werte.",
    err_generic: "Dieser Wert ist ungültig.",
    err_rate_limited: |m| {
        if m <= 1 {
            "Sie haben in kurzer Zeit viele Umfragen erstellt. Bitte versuchen Sie es in einer Minute erneut.".into()
        } else {
            format!("Sie haben in kurzer Zeit viele Umfragen erstellt. Bitte versuchen Sie es in {m} Minuten erneut.")
        }
    },
    err_unavailable: "Der Dienst ist gerade stark ausgelastet, es wurde nichts gespeichert. Bitte senden Sie das Formular gleich noch einmal.",

    created_title: "Ihre Umfrage ist bereit",
    created_share: "Teilnahmelink",
    created_share_hint: "Schicken Sie ihn an die Personen, die antworten sollen.",
    created_results: "Ergebnislink",
    created_results_private: "Die Ergebnisse sind privat: Diese Seite zeigt sie nur mit dem Verwaltungsschlüssel.",
    created_admin: "Verwaltungslink",
    created_admin_hint: "Um die Ergebnisse zu sehen und die Umfrage zu verwalten oder zu löschen.",
    created_warning_title: "Speichern Sie den Verwaltungslink jetzt",
    created_warning: "Er wird nur jetzt angezeigt, und wer ihn hat, kann die Umfrage verwalten.",
    copy: "Kopieren",
    copied: "Kopiert",
    open_poll: "Umfrage öffnen",

    status_open: "Offen für Antworten",
    status_closed: "Geschlossen",
    erased_on: |d| format!("Wird am {d} gelöscht"),
    created_on: |d| format!("Erstellt am {d}"),
    results_after_vote: "Jede Person, die abstimmt, direkt nach ihrer Stimme (und Sie)",
    results_after_close: "Alle, die den Link haben, sobald die Abstimmung beendet ist",
    field_closes_on: "Abstimmung endet am (optional)",
    field_closes_on_hint: "Ab diesem Tag nimmt die Umfrage keine Antworten mehr an; ihre Ergebnisse bleiben bis zur Löschung. Leer lassen, um die Umfrage selbst zu schließen.",
    field_shuffle: "Antworten jedem Besuch in neuer zufälliger Reihenfolge zeigen",
    field_shuffle_hint: "Damit keine Antwort davon profitiert, dass sie zuerst steht. Die Ergebnisse behalten Ihre Reihenfolge.",
    closes_on: |d| format!("Abstimmung endet am {d}"),
    closed_on: |d| format!("Abstimmung endete am {d}"),
    err_not_a_day: "Geben Sie einen Tag ein oder lassen Sie das Feld leer.",
    err_deadline_not_after_today: "Der Schlusstag muss nach heute liegen. Um die Abstimmung jetzt zu beenden, schließen Sie die Umfrage.",
    err_deadline_after_expiry: |d| format!("Der Schlusstag muss vor dem Löschdatum der Umfrage liegen ({d})."),
    err_expires_before_deadline: |d| {
        format!(
            "Die Umfrage würde vor ihrem Schlusstag ({d}) gelöscht. Verschieben oder entfernen Sie zuerst den Schlusstag."
        )
    },
    withheld_title: "Ergebnisse noch nicht sichtbar",
    withheld_after_vote: "Diese Umfrage zeigt ihre Ergebnisse jeder Person direkt nach ihrer Stimme und der Person, die sie erstellt hat.",
    withheld_after_close: "Diese Umfrage zeigt ihre Ergebnisse allen, sobald die Abstimmung beendet ist. Bis dahin sieht sie nur die Person, die sie erstellt hat.",
    withheld_after_close_on: |d| {
        format!(
            "Diese Umfrage zeigt ihre Ergebnisse allen, sobald die Abstimmung beendet ist, spätestens am {d}. Bis dahin sieht sie nur die Person, die sie erstellt hat."
        )
    },
    voted_results: "Danke, Ihre Antwort ist gezählt. Das sind die bisherigen Ergebnisse.",
    settings_heading: "Einstellungen",
    settings_save: "Einstellungen speichern",
    settings_done: "Einstellungen gespeichert.",

    vote_intro: "Beantworten Sie die Fragen unten; Fragen ohne den Hinweis „Pflichtfrage“ können Sie auslassen. Ihre Teilnahme ist anonym: Gespeichert wird nur der Tag, an dem Sie sie abschicken.",
    vote_submit: "Antwort abschicken",
    already_voted: "Mit diesem Browser wurde bereits an dieser Umfrage teilgenommen.",
    closed_title: "Diese Umfrage ist geschlossen",
    closed_text: "Sie nimmt keine Antworten mehr an.",
    see_results: "Ergebnisse ansehen",
    err_no_answer: "Bitte beantworten Sie mindestens eine Frage.",
    err_vote_form: "Dieses Formular wurde verändert: Es enthält Antworten, die keine Frage dieser Umfrage annimmt. Bitte prüfen Sie Ihre Antworten und senden Sie sie erneut.",
    err_ballot_used: "Diese Antwort wurde bereits gezählt. Jedes Formular kann nur einmal abgeschickt werden.",
    err_ballot_expired: "Dieses Formular ist abgelaufen. Ihre Auswahl ist unten erhalten: Bitte schicken Sie sie erneut ab.",
    create_sent_title: "Dieses Formular wurde bereits gesendet",
    create_sent_text: [
        "Ihre Umfrage wurde beim ersten Senden dieses Formulars erstellt. Das Formular kam erneut (durch Zurückgehen zu ihm oder durch Neuladen der Seite), und es wurde nichts Neues erstellt.",
        "Die Links der Umfrage wurden einmal angezeigt, direkt nach dem Erstellen. Wenn Sie den Verwaltungslink gespeichert haben, öffnen Sie ihn: Die Verwaltungsseite zeigt den Teilnahmelink und die Ergebnisse.",
        "Ohne den Verwaltungslink kann Ihnen niemand die Links erneut anzeigen, auch wir nicht: Wir speichern nur einen Fingerabdruck seines Schlüssels, und der Teilnahmelink lässt sich ohne ihn nicht wiederfinden. Wenn Sie die Umfrage von jener Seite aus geöffnet haben, steht ihre Adresse im Verlauf Ihres Browsers.",
    ],
    err_create_expired: "Dieses Formular ist abgelaufen. Ihre Eingaben sind unten erhalten: Bitte schicken Sie das Formular erneut ab.",
    err_throttled: "In den letzten Minuten kamen aus Ihrem Netzwerk sehr viele Antworten auf diese Umfrage. Bitte versuchen Sie es etwas später erneut.",
    err_voted_from_network: |n| {
        let counted = match n {
            0 | 1 => "Eine Antwort auf diese Umfrage aus Ihrem Netz wurde in den letzten 24 Stunden bereits gezählt."
                .to_owned(),
            n => format!(
                "{} Antworten auf diese Umfrage aus Ihrem Netz wurden in den letzten 24 Stunden bereits gezählt.",
                super::grouped(n as usize, ".")
            ),
        };
        format!(
            "{counted} Teilen sich viele Menschen diese Verbindung, kann die Person, die die Umfrage erstellt hat, auf der Verwaltungsseite Einladungscodes oder die weite Grenze („ein Raum an einer Verbindung“) wählen."
        )
    },
    err_paced: "Aus Ihrem Netzwerk kommen gerade viele lange Antworten auf diese Umfrage gleichzeitig an. Bitte senden Sie Ihre in einem Moment erneut.",
    err_vote_not_saved: "Ihre Antwort konnte gerade nicht gespeichert werden. Ihre Auswahl ist unten erhalten: Bitte schicken Sie sie erneut ab.",
    thanks_title: "Vielen Dank!",
    thanks_text: "Ihre Antwort wurde gezählt.",
    thanks_private: "Die Ergebnisse dieser Umfrage sieht nur die Person, die sie erstellt hat.",

    results_heading: "Ergebnisse",
    responses_total: |n| match n {
        0 => "Noch keine Teilnahmen".into(),
        1 => "1 Teilnahme".into(),
        _ => format!("{n} Teilnahmen"),
    },
    answered: |n| match n {
        1 => "1 Person hat diese Frage beantwortet".into(),
        _ => format!("{n} Personen haben diese Frage beantwortet"),
    },
    col_answer: "Antwort",
    col_votes: "Stimmen",
    col_share: "Anteil",
    by_day_heading: "Teilnahmen pro Tag",
    col_day: "Tag",
    col_responses: "Teilnahmen",
    no_responses: "Bisher hat noch niemand teilgenommen.",

    private_results_title: "Diese Ergebnisse sind privat",
    private_results_text: "Geben Sie den Verwaltungsschlüssel der Umfrage ein, um sie zu sehen. Wenn Sie diese Seite über den Verwaltungslink öffnen, wird der Schlüssel automatisch eingetragen.",
    token_label: "Verwaltungsschlüssel",
    token_hint: "Der Teil des Verwaltungslinks nach dem Zeichen #.",
    token_show_results: "Ergebnisse anzeigen",
    token_open_admin: "Verwaltungsseite öffnen",
    err_bad_token: "Dieser Schlüssel gehört nicht zu dieser Umfrage. Bitte prüfen Sie, ob Sie den Verwaltungslink vollständig kopiert haben.",

    admin_title: "Umfrage verwalten",
    admin_intro: "Öffnen Sie diese Seite mit dem Verwaltungslink, den Sie beim Erstellen der Umfrage erhalten haben, oder fügen Sie den Verwaltungsschlüssel unten ein.",
    links_heading: "Links",
    status_heading: "Status",
    close_poll: "Umfrage schließen",
    reopen_poll: "Umfrage wieder öffnen",
    closed_done: "Die Umfrage ist geschlossen. Sie nimmt keine Antworten mehr an.",
    reopened_done: "Die Umfrage ist wieder geöffnet.",
    expiry_heading: "Löschdatum",
    expiry_label: "Umfrage löschen, ab heute gerechnet, nach",
    expiry_submit: "Löschdatum ändern",
    expiry_done: |d| format!("Die Umfrage wird jetzt am {d} gelöscht."),
    versions_heading: "Sprachfassungen",
    versions_intro: "Fügen Sie eine Übersetzung hinzu, damit alle die Umfrage in ihrer Sprache lesen können. Eine Fassung hat dieselben Fragen und Antworten in derselben Reihenfolge.",
    version_heading: |name| format!("Fassung auf {name}"),
    version_exists: "Diese Fassung ist veröffentlicht.",
    version_missing: "In dieser Sprache gibt es noch keine Fassung.",
    version_title: "Titel",
    original: |t| format!("Original: {t}"),
    version_save: "Diese Fassung speichern",
    version_remove: "Diese Fassung entfernen",
    version_saved: |name| format!("Die Fassung auf {name} ist gespeichert."),
    version_removed: |name| format!("Die Fassung auf {name} ist entfernt."),
    delete_heading: "Umfrage löschen",
    delete_text: "Damit werden die Umfrage und alle Antworten endgültig gelöscht.",
    delete_button: "Umfrage löschen …",
    delete_confirm_title: "Diese Umfrage endgültig löschen?",
    delete_confirm_text: "Die Umfrage, ihre Antworten und ihre Sprachfassungen werden sofort gelöscht. Das lässt sich nicht rückgängig machen.",
    delete_confirm_button: "Ja, endgültig löschen",
    delete_cancel: "Nein, behalten",
    deleted_title: "Die Umfrage ist gelöscht",
    deleted_text: "Die Umfrage und alle Antworten wurden gelöscht.",

    not_found_title: "Umfrage nicht gefunden",
    not_found_text: "Diese Umfrage gibt es nicht oder sie wurde gelöscht. Eine Umfrage wird zu ihrem Löschdatum gelöscht oder früher, wenn die Person, die sie erstellt hat, sie löscht.",
    page_not_found_title: "Seite nicht gefunden",
    page_not_found_text: "Unter dieser Adresse gibt es keine Seite.",
    bad_form: "Das Formular konnte nicht gelesen werden. Bitte laden Sie die Seite neu und versuchen Sie es noch einmal.",
    too_large: "Das Formular ist zu groß und wurde nicht angenommen.",
    media_kind_names: ["Bild", "Audio", "Video"],
    media_poll_legend: "Bild, Audio oder Video für die ganze Umfrage (optional)",
    media_question_legend: "Bild, Audio oder Video für diese Frage (optional)",
    media_file: "Datei",
    media_file_hint: |i, a, v| {
        format!(
            "Bilder (JPEG, PNG, WebP, GIF) bis {i} MB, Audio (MP3, Ogg, M4A) bis {a} MB, Videos (MP4 mit H.264, WebM) bis {v} MB. Standort, Kamera und andere versteckte Angaben werden entfernt, bevor die Datei gespeichert wird."
        )
    },
    media_alt: "Beschreibung",
    media_alt_hint: "Bei einem Bild erforderlich: was es zeigt, für Menschen, die es nicht sehen können. Bei Audio oder Video: eine optionale Beschriftung.",
    media_drop: "Diese Datei entfernen",
    media_open: "Datei öffnen",
    err_media_type: "Diese Dateiart wird nicht angenommen. Wählen Sie ein Bild (JPEG, PNG, WebP, GIF), eine Audiodatei (MP3, Ogg, M4A) oder ein Video (MP4 mit H.264, WebM).",
    err_media_too_large: |kind, mb| format!("Diese Datei ({kind}) ist zu groß: höchstens {mb} MB."),
    err_media_pixels: |mp| format!("Dieses Bild hat zu viele Pixel: höchstens {mp} Megapixel."),
    err_media_corrupt: "Diese Datei ist beschädigt oder unvollständig und konnte nicht gelesen werden.",
    err_media_codec: "Diese Datei ist in einem Format kodiert, das nicht angenommen wird. Videos müssen H.264 in MP4 oder VP8, VP9 bzw. AV1 in WebM sein, Audiodateien MP3, Opus oder Vorbis in Ogg oder AAC in M4A.",
    err_media_empty: "Diese Datei ist leer.",
    err_media_busy: "Gerade werden zu viele Dateien verarbeitet. Bitte senden Sie das Formular gleich noch einmal.",
    err_media_full: "Der Server hält gerade zu viele Dateien für noch nicht abgeschickte Formulare. Bitte versuchen Sie es später noch einmal.",
    err_media_quota: "Sie haben zu viele Dateien in noch nicht abgeschickten Formularen. Erstellen Sie Ihre Umfrage oder entfernen Sie nicht benötigte Dateien und versuchen Sie es dann noch einmal.",
    err_media_lost: "Die zuvor gewählte Datei liegt nicht mehr auf dem Server. Bitte wählen Sie sie noch einmal.",
    err_alt_required: "Beschreiben Sie das Bild für Menschen, die es nicht sehen können.",
    media_heading: "Bilder, Audio und Videos",
    media_intro: "Hängen Sie eine Datei an die Umfrage und je eine an jede Frage. Eine neue Datei ersetzt die alte, die gelöscht wird.",
    media_slot: "Gezeigt bei",
    media_slot_poll: "Ganze Umfrage",
    media_attach: "Datei anhängen",
    media_attached: "Die Datei wurde angehängt.",
    media_removed: "Die Datei wurde entfernt und gelöscht.",
    media_none: "Keine Datei angehängt.",
    media_remove: "Entfernen und löschen",
    cross_site: "Dieses Formular wurde von einer anderen Website abgeschickt und deshalb abgelehnt.",
    method_not_allowed: "Diese Seite kann so nicht verwendet werden.",
    error_title: "Etwas ist schiefgegangen",
    error_text: "Es wurde nichts geändert. Bitte versuchen Sie es gleich noch einmal.",
    back_home: "Zurück zur Startseite",

    privacy_title: "Datenschutz",
    privacy_intro: "anonpoll speichert so wenig wie möglich und nur so lange, wie eine Umfrage besteht. Hier steht genau, was wo und wie lange gespeichert wird.",
    privacy_table_caption: "Was gespeichert wird",
    privacy_col_what: "Was",
    privacy_col_where: "Wo",
    privacy_col_until: "Wie lange",
    privacy_rows: ROWS,
    privacy_throttle_row: |m| {
        (
            "Gegen Stimmenmanipulation: ein Fingerabdruck aus Ihrer Netzwerkadresse und der Umfrage, berechnet mit einem geheimen Schlüssel, und die Zahl der Antworten, die zuletzt von dieser Adresse kamen".into(),
            "Nur im Arbeitsspeicher des Servers".into(),
            format!("Höchstens {} Minuten, danach wird auch der Schlüssel verworfen", 2 * m),
        )
    },
    privacy_never_heading: "Was nie gespeichert wird",
    privacy_never: [
        "Keine Cookies: Diese Website setzt auf keiner Seite welche.",
        "Keine Netzwerkadresse (IP-Adresse) wird gespeichert oder in ein Protokoll geschrieben.",
        "Keine Namen, keine Konten, keine E-Mail-Adressen und keine Uhrzeiten: Daten werden nur tagesgenau gespeichert.",
        "Kein Tracking, keine Werbung und nichts, was von anderen Websites geladen wird.",
        "Gelöscht heißt gelöscht: Wird eine Umfrage gelöscht oder erreicht sie ihr Löschdatum, werden ihre Daten in der Datenbank überschrieben, nicht bloß ausgeblendet.",
    ],
    privacy_browser_heading: "In Ihrem Browser",
    privacy_browser: "Nachdem Sie an einer Umfrage teilgenommen haben, vermerkt Ihr Browser dies in seinem lokalen Speicher, damit die Seite der Umfrage Sie daran erinnern kann, dass Sie schon geantwortet haben. Dieser Vermerk bleibt auf Ihrem Gerät und wird nie an uns übertragen. Er wird nach dem Löschdatum der Umfrage entfernt; Sie können ihn auch jederzeit löschen, indem Sie die Daten dieser Website in Ihrem Browser löschen. Der Verwaltungslink trägt seinen Schlüssel nach dem Zeichen # – einem Teil der Adresse, den Browser nie an einen Server senden. Wechseln Sie beim Antworten die Sprache, warten Ihre bisherigen Antworten in diesem Tab nur bis zur nächsten Seite.",
    required_mark: "(Pflichtfrage)",
    choose_between: |min, max, n| match (min, max) {
        (1, m) if m == n => "Wählen Sie eine oder mehrere Antworten.".into(),
        (a, b) if a == b => format!("Wählen Sie {a} Antworten."),
        (1, b) => format!("Wählen Sie bis zu {b} Antworten."),
        (a, b) => format!("Wählen Sie {a} bis {b} Antworten."),
    },
    rank_hint: "Geben Sie Ihrer ersten Wahl die 1, der nächsten die 2 und so weiter. Sie können auch nur einige ordnen; die übrigen zählen hinter allen, die Sie geordnet haben.",
    no_answer: "Keine Antwort",
    rank_none: "Nicht eingeordnet",
    rank_of: |o| format!("Platz für „{o}“"),
    rank_up: "Nach oben",
    rank_down: "Nach unten",
    rank_now: |o, r| format!("„{o}“ steht jetzt auf Platz {r}."),
    rank_now_none: |o| format!("„{o}“ ist nicht eingeordnet."),
    scale_hint: |lo, hi| format!("Wählen Sie einen Wert von {lo} bis {hi}."),
    field_type: "Art der Frage",
    type_names: ["Eine Antwort", "Mehrere Antworten", "Rangfolge", "Skala"],
    field_required: "Antwort erforderlich",
    field_min_choices: "Mindestens (Antworten)",
    field_max_choices: "Höchstens (Antworten)",
    field_choices_hint: "Leer lassen für die übliche Regel: mindestens eine, höchstens alle.",
    field_scale_min: "Von",
    field_scale_max: "Bis",
    field_scale_min_named: "der kleinste Wert der Skala (Von)",
    field_scale_max_named: "der größte Wert der Skala (Bis)",
    field_min_label: "Beschriftung am unteren Ende (optional)",
    field_max_label: "Beschriftung am oberen Ende (optional)",
    err_range: |a, b| {
        let (a, b) = (super::grouped(a, "."), super::grouped(b, "."));
        if a == b {
            format!("Hier ist nur {a} möglich.")
        } else {
            format!("Geben Sie eine ganze Zahl von {a} bis {b} ein.")
        }
    },
    err_not_for_type: "Dieses Feld gilt nicht für diese Art von Frage.",
    err_choice_count: |q, a, b| {
        if a == b {
            format!("Frage {q}: Wählen Sie genau {a} Antworten.")
        } else {
            format!("Frage {q}: Wählen Sie {a} bis {b} Antworten.")
        }
    },
    err_repeated_rank: |q| {
        format!("Frage {q}: Zwei Antworten haben denselben Platz. Vergeben Sie jeden Platz nur einmal.")
    },
    err_rank_gap: |q| format!("Frage {q}: Die Plätze müssen lückenlos 1, 2, 3 und so weiter lauten."),
    err_off_scale: |q, a, b| format!("Frage {q}: Wählen Sie einen Wert von {a} bis {b}."),
    err_no_such_option: |q| {
        format!("Frage {q}: Diese Antwort gehört nicht zu ihren Möglichkeiten. Bitte wählen Sie erneut.")
    },
    err_unanswered: |q| format!("Frage {q} muss beantwortet werden."),
    first_choices: "Erste Wahl",
    ranking_heading: "Gesamtrangfolge",
    ranking_none: "Noch hat niemand die Optionen in eine Reihenfolge gebracht.",
    place: |n| format!("{n}."),
    place_shared: |p| format!("{p} (geteilt)"),
    col_place: "Platz",
    pairwise_heading: "Direktvergleich",
    pairwise_hint: "Jede Zelle: wie viele Personen die Antwort der Zeile vor die der Spalte gesetzt haben. Die Gesamtrangfolge ergibt sich daraus nach der Schulze-Methode.",
    col_value: "Wert",
    scale_mean: "Mittelwert",
    scale_median: "Median",
    colon: ": ",
    tagline: "Anonyme Umfragen. Kein Konto, keine Cookies, kein Tracking.",
    problems_heading: "Bitte prüfen Sie Folgendes",
    media_kept: "Beibehaltene Datei",
    media_replace: "Stattdessen eine andere Datei wählen",
    leading: "Meiste Stimmen",
    share_qr: "QR-Code des Teilnahmelinks",
    remove_option: |n| format!("Antwort {n} entfernen"),
    results_live: "Wird automatisch aktualisiert, solange diese Seite offen ist.",
    invite_label: "Ihr Einladungscode",
    invite_hint: "Diese Umfrage nimmt eine Antwort pro Einladungscode an. Der Code steht auf Ihrer Einladung.",
    invite_hint_link: "Ein Einladungslink trägt ihn für Sie ein.",
    err_invite_missing: "Diese Umfrage nimmt eine Antwort pro Einladungscode an: Bitte geben Sie Ihren Code ein.",
    err_invites_sent: "Diese Codes wurden beim ersten Absenden des Formulars ausgegeben und können nicht noch einmal angezeigt werden (anonpoll bewahrt keine lesbare Kopie auf). Es wurde nichts weiter ausgegeben. Auf der Verwaltungsseite der Umfrage können Sie neue Codes ausgeben.",
    err_invites_expired: "Dieses Formular ist abgelaufen; es wurde nichts ausgegeben. Bitte senden Sie es erneut.",
    err_invite_not_a_code: "Das ist kein Einladungscode: Ein Code hat 20 Buchstaben und Ziffern (Groß- und Kleinschreibung, Leerzeichen und Bindestriche spielen keine Rolle). Bitte prüfen Sie ihn.",
    err_invite_refused: "Dieser Einladungscode gehört nicht zu dieser Umfrage oder wurde schon verwendet. Ihre Auswahl ist unten erhalten.",
    err_too_many_invites: |issued, max| {
        format!("Eine Umfrage kann höchstens {max} Einladungscodes haben; diese hat {issued}.")
    },
    field_duplicate: "Begrenzung wiederholter Antworten",
    duplicate_network: |n| match n {
        0 => "Eine Grenze pro Netz gegen schnelle Wiederholungen (die übliche Wahl)".into(),
        1 => "Eine Antwort pro Netz und Tag (die übliche Wahl)".into(),
        n => format!("{} Antworten pro Netz und Tag (die übliche Wahl)", super::grouped(n as usize, ".")),
    },
    duplicate_network_hint: |n| {
        let rule = match n {
            0 => "Jede Internetverbindung kann dieser Umfrage innerhalb weniger Minuten nur begrenzt viele Antworten senden; auf eine ist sie nicht beschränkt.".to_owned(),
            1 => "Jede Internetverbindung kann dieser Umfrage eine Antwort am Tag senden.".to_owned(),
            n => format!("Jede Internetverbindung kann dieser Umfrage {} Antworten am Tag senden.", super::grouped(n as usize, ".")),
        };
        format!(
            "{rule} Davon wird nichts gespeichert. Passend für einen offen geteilten Link; teilen sich viele Menschen eine Verbindung (eine Klasse, ein Büro), wählen Sie Einladungscodes oder die weite Grenze."
        )
    },
    duplicate_invite: "Einladungscodes: eine Antwort pro Code",
    duplicate_invite_hint: "Sie verteilen Codes von der Verwaltungsseite der Umfrage aus; jeder Code gilt einmal. Niemand, auch Sie nicht, kann erkennen, welcher Code welche Antwort abgegeben hat.",
    duplicate_none: "Eine weite Grenze (ein Raum an einer Verbindung)",
    duplicate_none_hint: "Wer den Link hat, kann mehrfach antworten, eine Verbindung bis zum Zehnfachen der üblichen Grenze. Für einen Raum voller Menschen mit einer gemeinsamen Verbindung, wenn Sie ihnen vertrauen.",
    invites_heading: "Einladungscodes",
    invites_intro: "Mit jedem Code kann eine Person einmal antworten. Codes werden nur beim Erstellen angezeigt: Drucken oder speichern Sie sie gleich. Niemand kann erkennen, welcher Code welche Antwort abgegeben hat.",
    invites_not_in_use: "Diese Umfrage verlangt zurzeit keine Einladungscodes: Codes zählen erst, wenn in den Einstellungen „Einladungscodes“ gewählt ist.",
    invites_status: |issued, used| {
        let codes = if issued == 1 { "Code" } else { "Codes" };
        format!("{issued} {codes} erstellt, {used} verwendet.")
    },
    invites_count_label: "Wie viele neue Codes",
    invites_count_hint: "1 bis 1.000 auf einmal.",
    invites_issue: "Erstellen und Karten zum Drucken zeigen",
    invites_issue_csv: "Erstellen und als CSV herunterladen",
    invites_sheet_title: "Neue Einladungscodes",
    invites_sheet_count: |n| {
        if n == 1 { "1 neuer Code für diese Umfrage.".into() } else { format!("{n} neue Codes für diese Umfrage.") }
    },
    invites_once: "Diese Codes werden nur jetzt angezeigt. anonpoll bewahrt sie nicht lesbar auf und kann sie nicht noch einmal zeigen: Drucken Sie diese Seite (oder speichern Sie sie im Druckdialog als PDF), bevor Sie sie verlassen. Eine gespeicherte Kopie der Seite enthält keinen Verwaltungsschlüssel.",
    invites_print_hint: "Drucken Sie diese Seite und schneiden Sie für jede Person eine Karte aus.",
    print_button: "Drucken",
    invite_card_text: "Sie sind eingeladen, an dieser Umfrage teilzunehmen. Scannen Sie den Code oder öffnen Sie den Link; eine Antwort pro Code.",
    invite_card_text_open: "Sie sind eingeladen, an dieser Umfrage teilzunehmen. Scannen Sie den Code oder öffnen Sie den Link.",
    invite_card_code: "Einladungscode",
    invite_card_link: "Einladungslink",
    invite_qr: "QR-Code des Einladungslinks",
    invites_back: "Zurück zur Verwaltung der Umfrage",
    invite_field_missing: "Geben Sie den Code von Ihrer Einladung ein.",
    invite_field_not_a_code: "Ein Code hat 20 Buchstaben und Ziffern.",
    invite_field_refused: "Dieser Code gehört nicht zu dieser Umfrage oder wurde schon verwendet.",
    vote_changes_label: "Teilnehmende dürfen ihre Antwort ändern oder zurückziehen",
    vote_changes_hint: "Alle Teilnehmenden erhalten eine Quittung, einen Code, den nur sie haben. Damit können sie ihre eigene Antwort bis zum Ende der Abstimmung ansehen, ändern oder zurückziehen. Gespeichert wird nur ein Fingerabdruck neben der Antwort: Er verrät niemandem, wer geantwortet hat.",
    receipt_heading: "Ihre Quittung",
    receipt_text: "Mit dieser Quittung können Sie Ihre Antwort bis zum Ende der Abstimmung ansehen, ändern oder zurückziehen. Sie wird nur jetzt angezeigt: Bewahren Sie eine Kopie auf. Wer sie hat, kann Ihre Antwort ändern.",
    receipt_kept: "Dieser Browser merkt sie sich außerdem für diese Umfrage (in seinem eigenen Speicher, nicht als Cookie), bis die Umfrage gelöscht wird.",
    receipt_label: "Quittung",
    receipt_link: "Link zu Ihrer Antwort (er enthält die Quittung)",
    receipt_open: "Meine Antwort ansehen oder ändern",
    receipt_remembered: "Sie haben in diesem Browser an dieser Umfrage teilgenommen.",
    receipt_forget: "Meine Quittungen in diesem Browser vergessen",
    own_ballot_title: "Ihre Antwort",
    own_ballot_prompt: "Geben Sie die Quittung ein, die Sie beim Antworten erhalten haben, um Ihre Antwort anzusehen, zu ändern oder zurückzuziehen.",
    own_ballot_show: "Meine Antwort zeigen",
    own_ballot_intro: "So wird Ihre Antwort gezählt. Ändern und speichern Sie sie, oder ziehen Sie sie zurück.",
    own_ballot_change: "Änderungen speichern",
    own_ballot_withdraw: "Meine Antwort zurückziehen",
    own_ballot_withdraw_hint: "Wenn Sie zurückziehen, wird Ihre Antwort gelöscht und nicht mehr gezählt. Das lässt sich nicht rückgängig machen.",
    own_ballot_changed: "Ihre Antwort wurde geändert.",
    own_ballot_withdrawn_title: "Antwort zurückgezogen",
    own_ballot_withdrawn_text: "Ihre Antwort wurde gelöscht und wird nicht mehr gezählt.",
    err_receipt_not_a_receipt: "Eine Quittung hat 24 Buchstaben und Ziffern.",
    err_receipt_unknown: "Keine Antwort auf diese Umfrage hat diese Quittung. Vielleicht wurde sie zurückgezogen.",
    err_receipt_changes_off: "Diese Umfrage erlaubt es nicht mehr, Antworten zu ändern oder zurückzuziehen.",
    err_receipt_closed: "Die Abstimmung ist beendet: Antworten können nicht mehr angesehen, geändert oder zurückgezogen werden.",
    keep_admin_label: "Verwaltungslink in diesem Browser behalten",
    keep_admin_hint: "Es wird nichts an uns übertragen; wer diesen Browser benutzt, kann die Umfrage dann verwalten.",
    opens_new_tab: "(öffnet in einem neuen Tab)",
    my_polls_heading: "Ihre Umfragen auf diesem Gerät",
    my_polls_hint: "Verwaltungslinks, die Sie in diesem Browser behalten wollten. Sie bleiben auf diesem Gerät und werden nie an uns übertragen; jeder wird nach dem Löschdatum seiner Umfrage entfernt.",
    my_polls_forget: "Vergessen",
    answer_again: "Noch einmal antworten (eine andere Person an diesem Gerät)",
    receipt_open_nth: |n, r| format!("Antwort {n} ansehen oder ändern (Quittung {r}…)"),
    receipt_have: "Auf einem anderen Gerät geantwortet? Diese Antwort mit ihrer Quittung ansehen oder ändern",
    invites_sent_title: "Diese Codes wurden bereits ausgegeben",
    created_share_hint_invite: "Der Link allein lässt niemanden antworten: Erstellen Sie als Nächstes die Einladungscodes, dann verteilen Sie die Karten oder Einladungslinks.",
    created_next_invites: "Weiter: Einladungscodes ausgeben",
    created_save_first: "Kopieren oder behalten Sie zuerst den Verwaltungslink: Nur diese Seite zeigt ihn. Drücken Sie die Schaltfläche erneut, um ohne ihn fortzufahren.",
    vote_not_sent: "Ihre Antwort wurde nicht gesendet. Bitte prüfen Sie Folgendes:",
    vote_err_choice_count: |a, b| match (a, b) {
        (1, 1) => "Wählen Sie genau eine Antwort.".into(),
        _ if a == b => format!("Wählen Sie genau {a} Antworten."),
        (1, b) => format!("Wählen Sie bis zu {b} Antworten."),
        _ => format!("Wählen Sie {a} bis {b} Antworten."),
    },
    vote_max_reached: |max| format!("Höchstens {max} Antworten: Entfernen Sie ein Häkchen, um eine andere zu wählen."),
    vote_err_repeated_rank: "Zwei Antworten haben denselben Platz. Vergeben Sie jeden Platz nur einmal.",
    vote_err_rank_gap: "Die Plätze müssen lückenlos 1, 2, 3 und so weiter lauten.",
    vote_err_off_scale: |a, b| format!("Wählen Sie einen Wert von {a} bis {b}."),
    vote_err_unanswered: "Diese Frage muss beantwortet werden.",
    vote_err_no_such_option: "Diese Antwort gehört nicht zu den Möglichkeiten der Frage. Bitte wählen Sie erneut.",
    withheld_vote: "An der Umfrage teilnehmen und die Ergebnisse sehen",
    withheld_open_poll: "Zur Umfrage",
    own_ballot_withdraw_code: "Der Einladungscode, mit dem Sie geantwortet haben, bleibt verbraucht.",
    err_questions_none: "Fügen Sie mindestens eine Frage hinzu: mit zwei oder mehr Antworten oder als Skala.",
    err_questions_many: |max| format!("Eine Umfrage kann höchstens {max} Fragen haben."),
    err_scale_to_above: |from| format!("Wählen Sie ein Ende über dem Anfang ({from})."),
    pairwise_hint_cards: "Jede Karte ist eine Antwort; jede Zeile: wie viele Personen sie vor die dort genannte Antwort gesetzt haben. Die Gesamtrangfolge ergibt sich daraus nach der Schulze-Methode.",

    create_another: "Weitere Umfrage erstellen",
    create_another_hint: "Das Formular kommt mit Ihren Eingaben zurück, für eine neue, eigene Umfrage (eine Datei muss neu gewählt werden).",
    voter_results_link: "Schon geantwortet? Die Ergebnisse mit Ihrer Quittung ansehen",
    voter_results_hint: "Schon geantwortet? Die Quittung, die Sie nach Ihrer Antwort erhalten haben, zeigt die Ergebnisse.",
    privacy_network_day_row: |n| {
        let what = match n {
            0 | 1 => "Eine Antwort pro Netz und Tag (die übliche Regel)".to_owned(),
            n => format!("{} Antworten pro Netz und Tag (die übliche Regel)", super::grouped(n as usize, ".")),
        };
        (
            format!("{what}: ein Fingerabdruck mit Schlüssel Ihrer Netzadresse und der Umfrage"),
            "Nur im Arbeitsspeicher des Servers".into(),
            "Höchstens zwei Tage, dann wird der Schlüssel selbst verworfen".into(),
        )
    },
};
