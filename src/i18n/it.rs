//! Italiano: registro informale (“tu”) in tutti i testi, come si usa sul web;
//! date come “1º marzo 2025”.

use super::{Catalogue, KeptRow};

const MONTHS: [&str; 12] = [
    "gennaio",
    "febbraio",
    "marzo",
    "aprile",
    "maggio",
    "giugno",
    "luglio",
    "agosto",
    "settembre",
    "ottobre",
    "novembre",
    "dicembre",
];

const ROWS: [KeptRow; 10] = [
    (
        "Il sondaggio: titolo, lingua, domande, risposte proposte, versioni linguistiche e impostazioni",
        "Database",
        "Fino alla data di cancellazione, o finché chi l’ha creato non lo elimina",
    ),
    (
        "Immagini, audio e video allegati al sondaggio, dopo la rimozione di posizione, fotocamera e altri dettagli nascosti; mai i nomi dei file",
        "Database",
        "Come il sondaggio",
    ),
    ("Il giorno di creazione del sondaggio e la sua data di cancellazione", "Database", "Come il sondaggio"),
    ("Un’impronta (SHA-256) della chiave di amministrazione, mai la chiave stessa", "Database", "Come il sondaggio"),
    (
        "Ogni partecipazione: il giorno dell’invio e la risposta scelta per ciascuna domanda",
        "Database",
        "Come il sondaggio",
    ),
    ("Il numero di voti per risposta e per giorno", "Database", "Come il sondaggio"),
    (
        "Per limitare la creazione di sondaggi: un’impronta del tuo indirizzo di rete, calcolata con una chiave segreta, e i momenti delle tue ultime creazioni",
        "Solo nella memoria del server",
        "Al massimo due ore, poi viene eliminata anche la chiave",
    ),
    (
        "Un codice casuale per ogni modulo di risposta già inviato, perché non venga contato due volte",
        "Solo nella memoria del server",
        "Al massimo fino alla fine del giorno successivo (UTC)",
    ),
    (
        "I sondaggi a cui hai risposto con questo browser, con la loro data di cancellazione; nel giorno di una risposta a un sondaggio che mostra i risultati dopo il voto, anche quel giorno e il codice del modulo inviato, che il link per tornare a quei risultati porta con sé",
        "Il tuo browser (localStorage), mai trasmesso",
        "Fino alla data di cancellazione del sondaggio, o finché non cancelli i dati di questo sito",
    ),
    (
        "I link di amministrazione che hai scelto di conservare in questo browser, con il titolo e la data di cancellazione del sondaggio",
        "Il tuo browser (localStorage), mai trasmesso",
        "Fino alla data di cancellazione del sondaggio, finché non lo dimentichi nella pagina iniziale, o finché non cancelli i dati di questo sito",
    ),
];

pub const IT: Catalogue = Catalogue {
    lang_names: ["inglese", "francese", "tedesco", "italiano"],
    date: |y, m, d| {
        let day = if d == 1 { "1º".to_owned() } else { d.to_string() };
        format!("{day} {} {y}", MONTHS[usize::from(m.clamp(1, 12)) - 1])
    },
    percent: |p, d| format!("{}%", format!("{p:.d$}").replace('.', ",")),

    skip_link: "Vai al contenuto",
    nav_label: "Navigazione principale",
    nav_create: "Nuovo sondaggio",
    nav_privacy: "Privacy",
    lang_switch_label: "Lingua",
    footer: "Sondaggi anonimi, senza account, cookie né tracciamento.",

    create_title: "Crea un sondaggio",
    create_intro: "Dai un titolo al sondaggio e inserisci almeno una domanda con due risposte. Le righe vuote vengono ignorate.",
    field_title: "Titolo",
    field_title_hint: "Al massimo 200 caratteri.",
    field_lang: "Lingua del sondaggio",
    field_lang_hint: "La lingua in cui scrivi le domande. Potrai aggiungere versioni in altre lingue in seguito.",
    field_expiry: "Cancella il sondaggio dopo",
    field_expiry_hint: "In quel giorno il sondaggio e tutte le risposte vengono cancellati definitivamente.",
    expiry_option: |d| match d {
        365 => "1 anno".into(),
        730 => "2 anni".into(),
        _ => format!("{d} giorni"),
    },
    field_results: "Chi può vedere i risultati?",
    results_public: "Chiunque abbia il link",
    results_private: "Solo tu, con il link di amministrazione",
    questions_heading: "Domande",
    questions_hint: "Fino a 20 domande. Una domanda le cui risposte si scelgono o si ordinano ne ha da 2 a 12; una scala non ne ha.",
    question_legend: |n| format!("Domanda {n}"),
    field_question: "Domanda",
    field_option: |n| format!("Risposta {n}"),
    add_option: "Aggiungi una risposta",
    add_question: "Aggiungi una domanda",
    remove_question: "Rimuovi questa domanda",
    move_up: "Sposta in alto",
    submit_create: "Crea il sondaggio",
    errors_heading: "Il sondaggio non è stato creato. Controlla quanto segue:",

    err_required: "Compila questo campo.",
    err_too_long: |n| format!("Usa al massimo {n} caratteri."),
    err_control: "Qui non sono ammessi a capo né tabulazioni.",
    err_bidi: "Qui non sono ammessi caratteri che invertono la direzione del testo (come U+202E).",
    err_separator: "Qui non sono ammessi separatori di riga o di paragrafo (U+2028, U+2029): il testo sta su una sola riga.",
    err_marks: |n| format!("Troppi accenti o segni su una sola lettera: al massimo {n}."),
    err_invisible: "Questo campo non mostra nulla: contiene solo caratteri invisibili. Inserisci un testo visibile.",
    err_questions_count: |min, max| {
        format!("Un sondaggio deve avere almeno {min} domanda con almeno due risposte e al massimo {max} domande.")
    },
    err_options_count: |min, max| format!("Una domanda deve avere da {min} a {max} risposte."),
    err_duplicate: |n| format!("Questa risposta è uguale alla risposta {n} di questa domanda."),
    err_lookalike: |n| {
        format!(
            "Questa risposta sembra identica alla risposta {n} di questa domanda, anche se i caratteri sono diversi (una lettera di un altro alfabeto o un carattere invisibile). Chi partecipa non potrebbe distinguerle: rendile visibilmente diverse."
        )
    },
    err_choice: "Scegli uno dei valori proposti.",
    err_generic: "Questo valore non è valido.",
    err_rate_limited: |m| {
        if m <= 1 {
            "Hai creato molti sondaggi in poco tempo. Riprova tra un minuto.".into()
        } else {
            format!("Hai creato molti sondaggi in poco tempo. Riprova tra {m} minuti.")
        }
    },
    err_unavailable: "Il servizio è molto occupato in questo momento e non è stato salvato nulla. Invia di nuovo il modulo tra poco.",

    created_title: "Il tuo sondaggio è pronto",
    created_share: "Link per partecipare",
    created_share_hint: "Invialo alle persone che devono rispondere.",
    created_results: "Link dei risultati",
    created_results_private: "I risultati sono privati: questa pagina li mostra solo a chi possiede la chiave di amministrazione.",
    created_admin: "Link di amministrazione",
    created_admin_hint: "Per vedere i risultati, gestire o eliminare il sondaggio.",
    created_warning_title: "Salva subito il link di amministrazione",
    created_warning: "Viene mostrato solo ora, e chiunque lo possieda può gestire il sondaggio.",
    copy: "Copia",
    copied: "Copiato",
    open_poll: "Apri il sondaggio",

    status_open: "Aperto alle risposte",
    status_closed: "Chiuso",
    erased_on: |d| format!("Verrà cancellato il {d}"),
    created_on: |d| format!("Creato il {d}"),
    results_after_vote: "Ogni persona che vota, subito dopo il voto (e tu)",
    results_after_close: "Chiunque abbia il link, una volta chiusa la votazione",
    field_closes_on: "La votazione si chiude il (facoltativo)",
    field_closes_on_hint: "Da questo giorno il sondaggio non accetta più risposte; i risultati restano fino alla cancellazione. Lascia vuoto se preferisci chiudere il sondaggio a mano.",
    field_shuffle: "Mostrare le risposte in un ordine casuale a ogni visita",
    field_shuffle_hint: "Così nessuna risposta è avvantaggiata dall’essere la prima. I risultati mantengono il tuo ordine.",
    closes_on: |d| format!("La votazione si chiude il {d}"),
    closed_on: |d| format!("Votazione chiusa il {d}"),
    err_not_a_day: "Inserisci un giorno o lascia vuoto il campo.",
    err_deadline_not_after_today: "Il giorno di chiusura deve essere dopo oggi. Per fermare la votazione ora, chiudi il sondaggio.",
    err_deadline_after_expiry: |d| {
        format!("Il giorno di chiusura deve precedere il giorno di cancellazione del sondaggio ({d}).")
    },
    err_expires_before_deadline: |d| {
        format!(
            "Il sondaggio verrebbe cancellato prima del suo giorno di chiusura ({d}). Sposta o rimuovi prima il giorno di chiusura."
        )
    },
    withheld_title: "Risultati non ancora visibili",
    withheld_after_vote: "Questo sondaggio mostra i risultati a ogni persona subito dopo il voto, e a chi l’ha creato.",
    withheld_after_close: "Questo sondaggio mostra i risultati a tutti una volta chiusa la votazione. Fino ad allora li vede solo chi l’ha creato.",
    withheld_after_close_on: |d| {
        format!(
            "Questo sondaggio mostra i risultati a tutti una volta chiusa la votazione, al più tardi il {d}. Fino ad allora li vede solo chi l’ha creato."
        )
    },
    voted_results: "Grazie, la tua risposta è stata contata. Ecco i risultati finora.",
    settings_heading: "Impostazioni",
    settings_save: "Salva le impostazioni",
    settings_done: "Impostazioni salvate.",

    vote_intro: "Rispondi alle domande qui sotto; puoi lasciare senza risposta quelle non obbligatorie. La partecipazione è anonima: insieme alle risposte si conserva solo il giorno dell’invio.",
    vote_submit: "Invia la risposta",
    already_voted: "Da questo browser è già stata inviata una risposta a questo sondaggio.",
    closed_title: "Questo sondaggio è chiuso",
    closed_text: "Non accetta più risposte.",
    see_results: "Vedi i risultati",
    err_no_answer: "Rispondi ad almeno una domanda.",
    err_vote_form: "Questo modulo è stato modificato: contiene risposte che nessuna domanda di questo sondaggio accetta. Controlla le risposte e inviale di nuovo.",
    err_ballot_used: "Questa risposta è già stata contata. Ogni modulo può essere inviato una sola volta.",
    err_ballot_expired: "Questo modulo è scaduto. Le tue scelte sono state mantenute qui sotto: inviale di nuovo.",
    create_sent_title: "Questo modulo è già stato inviato",
    create_sent_text: [
        "Il tuo sondaggio è stato creato al primo invio di questo modulo. Il modulo è arrivato di nuovo (tornando indietro o ricaricando la pagina) e non è stato creato nulla di nuovo.",
        "I link del sondaggio sono stati mostrati una sola volta, subito dopo la creazione. Se hai salvato il link di amministrazione, aprilo: la pagina di amministrazione mostra il link per partecipare e i risultati.",
        "Senza il link di amministrazione nessuno può mostrarti di nuovo i link, nemmeno noi: conserviamo soltanto un’impronta della sua chiave, e il link per partecipare non si può ritrovare senza di esso. Se hai aperto il sondaggio da quella pagina, il suo indirizzo è nella cronologia del tuo browser.",
    ],
    err_create_expired: "Questo modulo è scaduto. Quanto hai inserito è stato mantenuto qui sotto: invialo di nuovo.",
    err_throttled: "Negli ultimi minuti sono arrivate moltissime risposte a questo sondaggio dalla tua rete. Riprova un po’ più tardi.",
    err_voted_from_network: |n| {
        let counted = match n {
            0 | 1 => {
                "Una risposta a questo sondaggio dalla tua rete è già stata contata nelle ultime 24 ore.".to_owned()
            }
            n => format!(
                "{} risposte a questo sondaggio dalla tua rete sono già state contate nelle ultime 24 ore.",
                super::grouped(n as usize, ".")
            ),
        };
        format!(
            "{counted} Se molte persone condividono questa connessione, chi ha creato il sondaggio può scegliere i codici d’invito o il limite largo («una sala su una connessione») nella pagina di gestione del sondaggio."
        )
    },
    err_paced: "Dalla tua rete stanno arrivando molte risposte lunghe a questo sondaggio nello stesso momento. Invia di nuovo la tua tra un attimo.",
    err_vote_not_saved: "Non è stato possibile salvare la tua risposta. Le tue scelte sono state mantenute qui sotto: inviale di nuovo.",
    thanks_title: "Grazie!",
    thanks_text: "La tua risposta è stata contata.",
    thanks_private: "I risultati di questo sondaggio sono visibili solo a chi l’ha creato.",

    results_heading: "Risultati",
    responses_total: |n| match n {
        0 => "Ancora nessuna partecipazione".into(),
        1 => "1 partecipazione".into(),
        _ => format!("{n} partecipazioni"),
    },
    answered: |n| match n {
        1 => "1 persona ha risposto a questa domanda".into(),
        _ => format!("{n} persone hanno risposto a questa domanda"),
    },
    col_answer: "Risposta",
    col_votes: "Voti",
    col_share: "Percentuale",
    by_day_heading: "Partecipazioni per giorno",
    col_day: "Giorno",
    col_responses: "Partecipazioni",
    no_responses: "Nessuno ha ancora risposto.",

    private_results_title: "Questi risultati sono privati",
    private_results_text: "Inserisci la chiave di amministrazione del sondaggio per vederli. Se apri questa pagina con il link di amministrazione, la chiave viene inserita automaticamente.",
    token_label: "Chiave di amministrazione",
    token_hint: "La parte del link di amministrazione che segue il segno #.",
    token_show_results: "Mostra i risultati",
    token_open_admin: "Apri la pagina di amministrazione",
    err_bad_token: "Questa chiave non appartiene a questo sondaggio. Controlla di aver copiato per intero il link di amministrazione.",

    admin_title: "Gestisci il sondaggio",
    admin_intro: "Apri questa pagina con il link di amministrazione ricevuto alla creazione del sondaggio, oppure incolla qui sotto la chiave di amministrazione.",
    links_heading: "Link",
    status_heading: "Stato",
    close_poll: "Chiudi il sondaggio",
    reopen_poll: "Riapri il sondaggio",
    closed_done: "Il sondaggio è chiuso. Non accetta più risposte.",
    reopened_done: "Il sondaggio è di nuovo aperto.",
    expiry_heading: "Data di cancellazione",
    expiry_label: "Cancella il sondaggio, a partire da oggi, dopo",
    expiry_submit: "Cambia la data di cancellazione",
    expiry_done: |d| format!("Il sondaggio verrà ora cancellato il {d}."),
    versions_heading: "Versioni linguistiche",
    versions_intro: "Aggiungi una traduzione perché ognuno legga il sondaggio nella propria lingua. Una versione ha le stesse domande e risposte, nello stesso ordine.",
    version_heading: |name| format!("Versione in {name}"),
    version_exists: "Questa versione è pubblicata.",
    version_missing: "Non esiste ancora una versione in questa lingua.",
    version_title: "Titolo",
    original: |t| format!("Originale: {t}"),
    version_save: "Salva questa versione",
    version_remove: "Rimuovi questa versione",
    version_saved: |name| format!("La versione in {name} è stata salvata."),
    version_removed: |name| format!("La versione in {name} è stata rimossa."),
    delete_heading: "Elimina il sondaggio",
    delete_text: "Il sondaggio e tutte le risposte vengono cancellati definitivamente.",
    delete_button: "Elimina il sondaggio…",
    delete_confirm_title: "Eliminare definitivamente questo sondaggio?",
    delete_confirm_text: "Il sondaggio, le risposte e le versioni linguistiche verranno cancellati subito. L’operazione non si può annullare.",
    delete_confirm_button: "Sì, elimina definitivamente",
    delete_cancel: "No, conservalo",
    deleted_title: "Il sondaggio è stato eliminato",
    deleted_text: "Il sondaggio e tutte le risposte sono stati cancellati.",

    not_found_title: "Sondaggio non trovato",
    not_found_text: "Questo sondaggio non esiste o è stato cancellato. Un sondaggio viene cancellato alla sua data di cancellazione, o prima se chi l’ha creato lo elimina.",
    page_not_found_title: "Pagina non trovata",
    page_not_found_text: "A questo indirizzo non c’è alcuna pagina.",
    bad_form: "Non è stato possibile leggere il modulo. Ricarica la pagina e riprova.",
    too_large: "Il modulo è troppo grande per essere accettato.",
    media_kind_names: ["immagine", "audio", "video"],
    media_poll_legend: "Immagine, audio o video per tutto il sondaggio (facoltativo)",
    media_question_legend: "Immagine, audio o video per questa domanda (facoltativo)",
    media_file: "File",
    media_file_hint: |i, a, v| {
        format!(
            "Immagini (JPEG, PNG, WebP, GIF) fino a {i} MB, audio (MP3, Ogg, M4A) fino a {a} MB, video (MP4 con H.264, WebM) fino a {v} MB. Posizione, fotocamera e altri dettagli nascosti vengono rimossi prima di conservare il file."
        )
    },
    media_alt: "Descrizione",
    media_alt_hint: "Per un’immagine è obbligatoria: che cosa mostra, per chi non può vederla. Per audio o video: una didascalia facoltativa.",
    media_drop: "Rimuovi questo file",
    media_open: "Apri il file",
    err_media_type: "Questo tipo di file non è accettato. Scegli un’immagine JPEG, PNG, WebP o GIF, un audio MP3, Ogg o M4A, o un video MP4 (H.264) o WebM.",
    err_media_too_large: |kind, mb| format!("Questo file ({kind}) è troppo grande: al massimo {mb} MB."),
    err_media_pixels: |mp| format!("Questa immagine ha troppi pixel: al massimo {mp} megapixel."),
    err_media_corrupt: "Questo file è danneggiato o incompleto e non è stato possibile leggerlo.",
    err_media_codec: "Questo file usa una codifica non accettata. I video devono essere H.264 in MP4, oppure VP8, VP9 o AV1 in WebM; l’audio MP3, Opus o Vorbis in Ogg, oppure AAC in M4A.",
    err_media_empty: "Questo file è vuoto.",
    err_media_busy: "In questo momento si stanno elaborando troppi file. Invia di nuovo il modulo tra poco.",
    err_media_full: "Il server conserva in questo momento troppi file per moduli non ancora inviati. Riprova più tardi.",
    err_media_quota: "Hai troppi file in attesa in moduli non ancora inviati. Crea il sondaggio o rimuovi i file che non servono, poi riprova.",
    err_media_lost: "Il file scelto prima non è più conservato dal server. Sceglilo di nuovo.",
    err_alt_required: "Descrivi l’immagine per chi non può vederla.",
    media_heading: "Immagini, audio e video",
    media_intro: "Allega un file al sondaggio e uno a ciascuna domanda. Un nuovo file sostituisce il precedente, che viene cancellato.",
    media_slot: "Mostrato con",
    media_slot_poll: "Tutto il sondaggio",
    media_attach: "Allega il file",
    media_attached: "Il file è stato allegato.",
    media_removed: "Il file è stato rimosso e cancellato.",
    media_none: "Nessun file allegato.",
    media_remove: "Rimuovi e cancella",
    cross_site: "Questo modulo è stato inviato da un altro sito ed è stato rifiutato.",
    method_not_allowed: "Questa pagina non può essere usata in questo modo.",
    error_title: "Si è verificato un errore",
    error_text: "Non è stato modificato nulla. Riprova tra un momento.",
    back_home: "Torna alla pagina iniziale",

    privacy_title: "Privacy",
    privacy_intro: "anonpoll conserva il meno possibile, e solo finché un sondaggio esiste. Ecco esattamente che cosa viene conservato, dove e per quanto tempo.",
    privacy_table_caption: "Che cosa viene conservato",
    privacy_col_what: "Che cosa",
    privacy_col_where: "Dove",
    privacy_col_until: "Per quanto tempo",
    privacy_rows: ROWS,
    privacy_throttle_row: |m| {
        (
            "Contro i voti multipli automatizzati: un’impronta del tuo indirizzo di rete insieme al sondaggio, calcolata con una chiave segreta, e il numero delle risposte arrivate di recente da quell’indirizzo".into(),
            "Solo nella memoria del server".into(),
            format!("Al massimo {} minuti, poi viene eliminata anche la chiave", 2 * m),
        )
    },
    privacy_never_heading: "Che cosa non viene mai conservato",
    privacy_never: [
        "Nessun cookie: questo sito non ne imposta alcuno, su nessuna pagina.",
        "Nessun indirizzo di rete (IP) viene salvato o scritto in un registro.",
        "Nessun nome, nessun account, nessun indirizzo e-mail e nessun orario: le date sono conservate solo al giorno.",
        "Nessun tracciamento, nessuna pubblicità e nulla caricato da altri siti.",
        "Cancellato significa cancellato: quando un sondaggio viene eliminato o raggiunge la data di cancellazione, i suoi dati vengono sovrascritti nel database, non semplicemente nascosti.",
    ],
    privacy_browser_heading: "Nel tuo browser",
    privacy_browser: "Dopo che hai risposto a un sondaggio, il tuo browser lo annota nella propria memoria locale, così la pagina del sondaggio può ricordarti che hai già risposto. L’annotazione resta sul tuo dispositivo e non ci viene mai trasmessa. Viene rimossa dopo la data di cancellazione del sondaggio; puoi anche cancellarla in qualsiasi momento eliminando i dati di questo sito dal browser. Il link di amministrazione porta la chiave dopo il segno #, una parte dell’indirizzo che i browser non inviano mai a un server. Se cambi lingua mentre rispondi, le tue scelte attendono in questa scheda solo fino alla pagina successiva.",
    required_mark: "(obbligatoria)",
    choose_between: |min, max, n| match (min, max) {
        (1, m) if m == n => "Scegli una o più risposte.".into(),
        (a, b) if a == b => format!("Scegli {a} risposte."),
        (1, b) => format!("Scegli fino a {b} risposte."),
        (a, b) => format!("Scegli da {a} a {b} risposte."),
    },
    rank_hint: "Dai 1 alla prima scelta, 2 alla successiva e così via. Puoi ordinarne solo alcune; le altre contano dopo tutte quelle ordinate.",
    no_answer: "Nessuna risposta",
    rank_none: "Non in classifica",
    rank_of: |o| format!("Posizione di «{o}»"),
    rank_up: "Sposta su",
    rank_down: "Sposta giù",
    rank_now: |o, r| format!("«{o}» è ora in posizione {r}."),
    rank_now_none: |o| format!("«{o}» non è in classifica."),
    scale_hint: |lo, hi| format!("Scegli un valore da {lo} a {hi}."),
    field_type: "Tipo di domanda",
    type_names: ["Una risposta", "Più risposte", "Classifica", "Scala", "Trova una data"],
    avail_yes: "Sì",
    avail_if_need_be: "Se necessario",
    avail_no: "No",
    schedule_hint: "Per ogni data, indica se puoi venire. Una data lasciata senza risposta conta come no.",
    times_in: |zone| format!("Orari nel fuso {zone}."),
    all_day: "Tutto il giorno",
    weekdays: ["lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"],
    slot_day: |w, d| format!("{w} {d}"),
    best_slot: "Data migliore",
    slots_best_first: "Prima le date migliori",
    err_not_a_slot: "Inserisci una data che esiste, e se vuoi un orario (per esempio 18:30).",
    err_slot_order: |previous| {
        format!("Metti le date in ordine, ciascuna una volta: questa deve venire dopo {previous}.")
    },
    err_time_zone: "Inserisci un fuso orario come Europe/Rome, oppure lascia vuoto.",
    err_times: "Scrivi gli orari come 18:00, separati da virgole.",
    err_slots_count: |min, max| {
        format!("Proponi tra {min} e {max} date e orari (ogni orario comune conta una volta per ogni data).")
    },
    field_slots: "Date",
    field_slots_hint: "Un giorno, e se vuoi un orario. Elencate in ordine nel sondaggio.",
    field_slot_day: |n| format!("Data {n}"),
    field_slot_time: |n| format!("Orario {n} (facoltativo)"),
    field_times: "Gli stessi orari in ogni data (facoltativo)",
    field_times_hint: "Per esempio 18:00, 20:30: ogni data senza un orario proprio viene proposta a ciascuno di questi orari.",
    field_time_zone: "Fuso orario (facoltativo)",
    field_time_zone_hint: "Per esempio Europe/Rome. Mostrato accanto agli orari; nulla viene convertito.",
    add_slot: "Aggiungi una data",
    field_required: "Risposta obbligatoria",
    field_min_choices: "Almeno (risposte)",
    field_max_choices: "Al massimo (risposte)",
    field_choices_hint: "Lascia vuoto per la regola abituale: almeno una, al massimo tutte.",
    field_scale_min: "Da",
    field_scale_max: "A",
    field_scale_min_named: "il valore più basso della scala (Da)",
    field_scale_max_named: "il valore più alto della scala (A)",
    field_min_label: "Etichetta dell’estremo basso (facoltativa)",
    field_max_label: "Etichetta dell’estremo alto (facoltativa)",
    err_range: |a, b| {
        let (a, b) = (super::grouped(a, "."), super::grouped(b, "."));
        if a == b { format!("Qui è possibile solo {a}.") } else { format!("Inserisci un numero intero da {a} a {b}.") }
    },
    err_not_for_type: "Questo campo non vale per questo tipo di domanda.",
    err_choice_count: |q, a, b| {
        if a == b {
            format!("Domanda {q}: scegli esattamente {a} risposte.")
        } else {
            format!("Domanda {q}: scegli da {a} a {b} risposte.")
        }
    },
    err_repeated_rank: |q| {
        format!("Domanda {q}: due risposte hanno la stessa posizione. Usa ogni posizione una sola volta.")
    },
    err_rank_gap: |q| format!("Domanda {q}: le posizioni devono seguire 1, 2, 3 e così via, senza salti."),
    err_off_scale: |q, a, b| format!("Domanda {q}: scegli un valore da {a} a {b}."),
    err_no_such_option: |q| format!("Domanda {q}: questa risposta non è tra le sue opzioni. Scegli di nuovo."),
    err_unanswered: |q| format!("La domanda {q} richiede una risposta."),
    first_choices: "Prime scelte",
    ranking_heading: "Classifica generale",
    ranking_none: "Nessuno ha ancora ordinato le opzioni.",
    place: |n| format!("{n}°"),
    place_shared: |p| format!("{p} a pari merito"),
    col_place: "Posizione",
    pairwise_heading: "Confronti diretti",
    pairwise_hint: "Ogni cella: quante persone hanno messo la risposta della riga prima di quella della colonna. La classifica generale ne deriva con il metodo Schulze.",
    col_value: "Valore",
    scale_mean: "Media",
    scale_median: "Mediana",
    colon: ": ",
    tagline: "Sondaggi anonimi. Niente account, niente cookie, niente tracciamento.",
    problems_heading: "Controlla quanto segue",
    media_kept: "File conservato",
    media_replace: "Scegli un altro file al suo posto",
    leading: "Più voti",
    share_qr: "Codice QR del link per partecipare",
    remove_option: |n| format!("Rimuovi la risposta {n}"),
    results_live: "Si aggiorna da solo finché questa pagina è aperta.",
    invite_label: "Il tuo codice d’invito",
    invite_hint: "Questo sondaggio accetta una risposta per codice d’invito. Il codice è sul tuo invito.",
    invite_hint_link: "Un link d’invito lo inserisce per te.",
    err_invite_missing: "Questo sondaggio accetta una risposta per codice d’invito: inserisci il tuo.",
    err_invites_sent: "Questi codici sono stati emessi al primo invio del modulo e non possono essere mostrati di nuovo (anonpoll non ne conserva una copia leggibile). Non è stato emesso altro. Nella pagina di gestione del sondaggio puoi emettere un nuovo gruppo.",
    err_invites_expired: "Questo modulo è scaduto; non è stato emesso nulla. Invialo di nuovo.",
    err_invite_not_a_code: "Questo non è un codice d’invito: un codice ha 20 lettere e cifre (maiuscole, spazi e trattini non contano). Controllalo, per favore.",
    err_invite_refused: "Questo codice d’invito non appartiene a questo sondaggio, oppure è già stato usato. Le tue scelte sono conservate qui sotto.",
    err_too_many_invites: |issued, max| {
        format!("Un sondaggio può avere al massimo {max} codici d’invito; questo ne ha {issued}.")
    },
    field_duplicate: "Limite alle risposte ripetute",
    duplicate_network: |n| match n {
        0 => "Un limite per rete contro gli invii ravvicinati (la scelta abituale)".into(),
        1 => "Una risposta per rete al giorno (la scelta abituale)".into(),
        n => format!("{} risposte per rete al giorno (la scelta abituale)", super::grouped(n as usize, ".")),
    },
    duplicate_network_hint: |n| {
        let rule = match n {
            0 => "Ogni connessione internet può inviare a questo sondaggio solo un numero limitato di risposte in pochi minuti; non è limitata a una sola.".to_owned(),
            1 => "Ogni connessione internet può inviare una risposta al giorno a questo sondaggio.".to_owned(),
            n => format!("Ogni connessione internet può inviare {} risposte al giorno a questo sondaggio.", super::grouped(n as usize, ".")),
        };
        format!(
            "{rule} Non ne viene salvato nulla. Adatto a un link condiviso apertamente; se molte persone condividono una connessione (una classe, un ufficio), scegli i codici d’invito o il limite largo."
        )
    },
    duplicate_invite: "Codici d’invito: una risposta per codice",
    duplicate_invite_hint: "Distribuisci i codici dalla pagina di gestione del sondaggio; ogni codice vale una volta. Nessuno, nemmeno tu, può sapere quale codice ha dato quale risposta.",
    duplicate_none: "Un limite largo (una sala su una connessione)",
    duplicate_none_hint: "Chiunque abbia il link può rispondere più volte, una stessa connessione fino a dieci volte il limite abituale. Per una sala di persone che condividono una connessione, se ti fidi di loro.",
    invites_heading: "Codici d’invito",
    invites_intro: "Ogni codice permette a una persona di rispondere una volta. I codici si vedono solo quando li crei: stampali o salvali subito. Nessuno può sapere quale codice ha dato quale risposta.",
    invites_not_in_use: "Per ora questo sondaggio non chiede codici d’invito: i codici contano solo dopo aver scelto «Codici d’invito» nelle impostazioni.",
    invites_status: |issued, used| {
        let codes = if issued == 1 { "codice creato" } else { "codici creati" };
        let used_word = if used == 1 { "usato" } else { "usati" };
        format!("{issued} {codes}, {used} {used_word}.")
    },
    invites_count_label: "Quanti nuovi codici",
    invites_count_hint: "Da 1 a 1.000 alla volta.",
    invites_issue: "Crea e mostra le schede da stampare",
    invites_issue_csv: "Crea e scarica in CSV",
    invites_sheet_title: "Nuovi codici d’invito",
    invites_sheet_count: |n| {
        if n == 1 {
            "1 nuovo codice per questo sondaggio.".into()
        } else {
            format!("{n} nuovi codici per questo sondaggio.")
        }
    },
    invites_once: "Questi codici si vedono solo ora. anonpoll non li conserva in forma leggibile e non potrà mostrarli di nuovo: stampa questa pagina (o salvala in PDF dalla finestra di stampa) prima di lasciarla. Una copia salvata della pagina non contiene la chiave di amministrazione.",
    invites_print_hint: "Stampa questa pagina e ritaglia una scheda per persona.",
    print_button: "Stampa",
    invite_card_text: "Hai ricevuto un invito a rispondere a questo sondaggio. Scansiona il codice o apri il link; una risposta per codice.",
    invite_card_text_open: "Hai ricevuto un invito a rispondere a questo sondaggio. Scansiona il codice o apri il link.",
    invite_card_code: "Codice d’invito",
    invite_card_link: "Link d’invito",
    invite_qr: "Codice QR del link d’invito",
    invites_back: "Torna alla gestione del sondaggio",
    invite_field_missing: "Inserisci il codice del tuo invito.",
    invite_field_not_a_code: "Un codice ha 20 lettere e cifre.",
    invite_field_refused: "Questo codice non appartiene a questo sondaggio, oppure è già stato usato.",
    vote_changes_label: "Chi risponde può modificare o ritirare la propria risposta",
    vote_changes_hint: "Ogni partecipante riceve una ricevuta, un codice che ha solo lui, con cui può vedere, modificare o ritirare la propria risposta fino alla chiusura. Viene conservata solo come impronta accanto alla risposta: non dice a nessuno chi ha risposto.",
    receipt_heading: "La tua ricevuta",
    receipt_text: "Con questa ricevuta puoi vedere, modificare o ritirare la tua risposta fino alla chiusura. Viene mostrata solo ora: conservane una copia. Chiunque la possieda può modificare la tua risposta.",
    receipt_kept: "Questo browser la ricorda anche per questo sondaggio (nella sua memoria, non in un cookie) finché il sondaggio non viene cancellato.",
    receipt_label: "Ricevuta",
    receipt_link: "Link alla tua risposta (contiene la ricevuta)",
    receipt_open: "Vedi o modifica la mia risposta",
    receipt_remembered: "Hai risposto a questo sondaggio da questo browser.",
    receipt_forget: "Dimentica le mie ricevute in questo browser",
    own_ballot_title: "La tua risposta",
    own_ballot_prompt: "Inserisci la ricevuta che hai ricevuto rispondendo, per vedere, modificare o ritirare la tua risposta.",
    own_ballot_show: "Mostra la mia risposta",
    own_ballot_intro: "Ecco la tua risposta così come viene contata. Modificala e salva, oppure ritirala.",
    own_ballot_change: "Salva le modifiche",
    own_ballot_withdraw: "Ritira la mia risposta",
    own_ballot_withdraw_hint: "Ritirandola, la tua risposta verrà cancellata e non sarà più contata. Non si potrà annullare.",
    own_ballot_changed: "La tua risposta è stata modificata.",
    own_ballot_withdrawn_title: "Risposta ritirata",
    own_ballot_withdrawn_text: "La tua risposta è stata cancellata e non è più contata.",
    err_receipt_not_a_receipt: "Una ricevuta ha 24 lettere e cifre.",
    err_receipt_unknown: "Nessuna risposta a questo sondaggio ha questa ricevuta. Forse è stata ritirata.",
    err_receipt_changes_off: "Questo sondaggio non permette più di modificare o ritirare le risposte.",
    err_receipt_closed: "La votazione è chiusa: le risposte non si possono più vedere, modificare né ritirare.",
    keep_admin_label: "Conserva il link di amministrazione in questo browser",
    keep_admin_hint: "Non ci viene trasmesso nulla; chiunque usi questo browser potrà allora gestire il sondaggio.",
    opens_new_tab: "(si apre in una nuova scheda)",
    my_polls_heading: "I tuoi sondaggi su questo dispositivo",
    my_polls_hint: "I link di amministrazione che hai scelto di conservare in questo browser. Restano su questo dispositivo e non ci vengono mai trasmessi; ognuno viene tolto dopo la data di cancellazione del suo sondaggio.",
    my_polls_forget: "Dimentica",
    answer_again: "Rispondi di nuovo (un’altra persona su questo dispositivo)",
    receipt_open_nth: |n, r| format!("Vedi o modifica la risposta {n} (ricevuta {r}…)"),
    receipt_have: "Hai risposto su un altro dispositivo? Vedi o modifica quella risposta con la sua ricevuta",
    invites_sent_title: "Questi codici sono già stati emessi",
    created_share_hint_invite: "Il link da solo non permette a nessuno di rispondere: emetti poi i codici d’invito, quindi distribuisci le schede o i link d’invito.",
    created_next_invites: "Avanti: emetti i codici d’invito",
    created_save_first: "Copia o conserva prima il link di amministrazione: solo questa pagina lo mostra. Premi di nuovo il pulsante per proseguire senza.",
    vote_not_sent: "La tua risposta non è stata inviata. Controlla quanto segue:",
    vote_err_choice_count: |a, b| match (a, b) {
        (1, 1) => "Scegli esattamente una risposta.".into(),
        _ if a == b => format!("Scegli esattamente {a} risposte."),
        (1, b) => format!("Scegli fino a {b} risposte."),
        _ => format!("Scegli da {a} a {b} risposte."),
    },
    vote_max_reached: |max| format!("Al massimo {max} risposte: togline una per sceglierne un’altra."),
    vote_err_repeated_rank: "Due risposte hanno la stessa posizione. Usa ogni posizione una sola volta.",
    vote_err_rank_gap: "Le posizioni devono seguire 1, 2, 3 e così via, senza salti.",
    vote_err_off_scale: |a, b| format!("Scegli un valore da {a} a {b}."),
    vote_err_unanswered: "Questa domanda richiede una risposta.",
    vote_err_no_such_option: "Questa risposta non è tra le opzioni della domanda. Scegli di nuovo.",
    withheld_vote: "Rispondi al sondaggio per vedere i risultati",
    withheld_open_poll: "Vai al sondaggio",
    own_ballot_withdraw_code: "Il codice di invito con cui hai risposto resterà usato.",
    err_questions_none: "Aggiungi almeno una domanda: con due o più risposte, o una scala.",
    err_questions_many: |max| format!("Un sondaggio può avere al massimo {max} domande."),
    err_scale_to_above: |from| format!("Scegli una fine maggiore dell’inizio ({from})."),
    pairwise_hint_cards: "Ogni scheda è una risposta; ogni riga: quante persone l’hanno messa prima della risposta nominata lì. La classifica generale ne deriva con il metodo Schulze.",

    create_another: "Crea un altro sondaggio",
    create_another_hint: "Il modulo torna con quanto hai inserito, per un nuovo sondaggio a sé (un eventuale file va scelto di nuovo).",
    voter_results_link: "Hai già risposto? Vedi i risultati con la tua ricevuta",
    voter_results_hint: "Hai già risposto? La ricevuta che hai ottenuto dopo la tua risposta mostra i risultati.",
    privacy_network_day_row: |n| {
        let what = match n {
            0 | 1 => "Una risposta al giorno per rete (la regola abituale)".to_owned(),
            n => format!("{} risposte al giorno per rete (la regola abituale)", super::grouped(n as usize, ".")),
        };
        (
            format!("{what}: un’impronta con chiave dell’indirizzo della tua rete con il sondaggio"),
            "Solo nella memoria del server".into(),
            "Al massimo due giorni, poi la chiave stessa viene scartata".into(),
        )
    },
    edited_on: |d| format!("Modificato il {d}"),
    edit_heading: "Titolo e domande",
    edit_intro_open: "Nessuno ha ancora risposto: puoi correggere tutti i testi e aggiungere o rimuovere domande e risposte. Aggiungerne o rimuoverne elimina le immagini, i suoni e i video delle domande (quelli del sondaggio restano).",
    edit_intro_locked: "Il sondaggio ha delle risposte, quindi le sue domande e risposte restano come sono: puoi ancora correggerne i testi (un errore di battitura, per esempio). Le risposte mantengono il loro significato.",
    edit_shown: "Quando salvi una modifica, le pagine del sondaggio indicano che è stato modificato, e in che giorno.",
    edit_versions_note: "Aggiungere o rimuovere domande o risposte elimina le versioni linguistiche, che non corrisponderebbero più. Aggiungile di nuovo dopo.",
    edit_save: "Salva le modifiche",
    edit_saved: "Le tue modifiche sono salvate.",
    edit_saved_versions_dropped: "Le tue modifiche sono salvate. Le versioni linguistiche sono state eliminate: non corrispondevano più alle domande.",
    err_fixed_by_responses: "Questo non può più cambiare: il sondaggio ha delle risposte. Si possono correggere solo i testi.",
    err_poll_changed: "Le domande del sondaggio sono cambiate dopo che hai aperto questa pagina, quindi la tua risposta non è stata contata. Eccole come sono ora: rispondi di nuovo.",
    admin_done_again: "Per continuare a gestire il sondaggio, apri di nuovo il tuo link di amministrazione o inserisci qui sotto la chiave di amministrazione.",
    invites_shown_done: "I codici d’invito appena emessi sono stati mostrati una sola volta e non possono essere mostrati di nuovo (anonpoll non ne conserva una copia leggibile); non è stato emesso altro. Puoi emettere un nuovo gruppo qui sotto, in «Codici d’invito».",
};
