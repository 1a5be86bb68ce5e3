//! Français : registre soutenu, vouvoiement ; espace fine insécable
//! (U+202F) avant `: ; ? ! %` et à l’intérieur des guillemets « », comme
//! partout ailleurs dans l’interface.

use super::{Catalogue, KeptRow};

const MONTHS: [&str; 12] = [
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
];

const ROWS: [KeptRow; 10] = [
    (
        "Le sondage\u{202F}: titre, langue, questions, réponses proposées, versions linguistiques et réglages",
        "Base de données",
        "Jusqu’à sa date d’effacement, ou jusqu’à ce que son auteur le supprime",
    ),
    (
        "Images, sons et vidéos joints au sondage, une fois retirés la position, l’appareil et les autres détails cachés\u{202F}; jamais leur nom de fichier",
        "Base de données",
        "Comme le sondage",
    ),
    ("Le jour de création du sondage et sa date d’effacement", "Base de données", "Comme le sondage"),
    (
        "Une empreinte (SHA-256) de la clé d’administration, jamais la clé elle-même",
        "Base de données",
        "Comme le sondage",
    ),
    (
        "Chaque participation\u{202F}: le jour de son envoi et la réponse choisie à chaque question",
        "Base de données",
        "Comme le sondage",
    ),
    ("Le nombre de votes par réponse et par jour", "Base de données", "Comme le sondage"),
    (
        "Pour limiter la création de sondages\u{202F}: une empreinte de votre adresse réseau, calculée avec une clé secrète, et les instants de vos dernières créations",
        "Mémoire du serveur uniquement",
        "Deux heures au plus, puis la clé elle-même est détruite",
    ),
    (
        "Un code aléatoire par formulaire de réponse déjà envoyé, pour qu’il ne soit pas compté deux fois",
        "Mémoire du serveur uniquement",
        "Au plus tard jusqu’à la fin du lendemain (UTC)",
    ),
    (
        "Les sondages auxquels vous avez répondu dans ce navigateur, avec leur date d’effacement\u{202F}; le jour d’une réponse à un sondage qui montre ses résultats après le vote, aussi ce jour et le code du formulaire envoyé, que porte le lien de retour vers ces résultats",
        "Votre navigateur (localStorage), jamais transmis",
        "Jusqu’à la date d’effacement du sondage, ou jusqu’à ce que vous effaciez les données de ce site",
    ),
    (
        "Les liens d’administration que vous avez choisi de garder dans ce navigateur, avec le titre et la date d’effacement du sondage",
        "Votre navigateur (localStorage), jamais transmis",
        "Jusqu’à la date d’effacement du sondage, jusqu’à ce que vous l’oubliiez sur la page d’accueil, ou jusqu’à ce que vous effaciez les données de ce site",
    ),
];

pub const FR: Catalogue = Catalogue {
    lang_names: ["anglais", "français", "allemand", "italien"],
    date: |y, m, d| {
        let day = if d == 1 { "1er".to_owned() } else { d.to_string() };
        format!("{day} {} {y}", MONTHS[usize::from(m.clamp(1, 12)) - 1])
    },
    percent: |p, d| format!("{}\u{202F}%", format!("{p:.d$}").replace('.', ",")),

    skip_link: "Aller au contenu",
    nav_label: "Navigation principale",
    nav_create: "Nouveau sondage",
    nav_privacy: "Confidentialité",
    lang_switch_label: "Langue",
    footer: "Des sondages anonymes, sans compte, sans cookies ni pistage.",

    create_title: "Créer un sondage",
    create_intro: "Donnez un titre à votre sondage et au moins une question avec deux réponses. Les lignes vides sont ignorées.",
    field_title: "Titre",
    field_title_hint: "200 caractères au maximum.",
    field_lang: "Langue du sondage",
    field_lang_hint: "La langue dans laquelle vous rédigez les questions. Vous pourrez ajouter d’autres versions linguistiques ensuite.",
    field_expiry: "Effacer le sondage au bout de",
    field_expiry_hint: "Ce jour-là, le sondage et toutes ses réponses sont définitivement effacés.",
    expiry_option: |d| match d {
        365 => "1 an".into(),
        730 => "2 ans".into(),
        _ => format!("{d} jours"),
    },
    field_results: "Qui peut voir les résultats\u{202F}?",
    results_public: "Toute personne qui a le lien",
    results_private: "Uniquement vous, avec le lien d’administration",
    questions_heading: "Questions",
    questions_hint: "Jusqu’à 20\u{A0}questions. Une question dont on choisit ou classe les réponses en a de 2 à 12\u{202F}; une échelle n’en a pas.",
    question_legend: |n| format!("Question {n}"),
    field_question: "Question",
    field_option: |n| format!("Réponse {n}"),
    add_option: "Ajouter une réponse",
    add_question: "Ajouter une question",
    remove_question: "Supprimer cette question",
    move_up: "Monter",
    submit_create: "Créer le sondage",
    errors_heading: "Le sondage n’a pas été créé. Veuillez vérifier les points suivants\u{202F}:",

    err_required: "Veuillez remplir ce champ.",
    err_too_long: |n| format!("Veuillez utiliser au maximum {n} caractères."),
    err_control: "Les retours à la ligne et les tabulations ne sont pas admis ici.",
    err_bidi: "Les caractères qui inversent le sens du texte (comme U+202E) ne sont pas admis ici.",
    err_separator: "Les séparateurs de ligne et de paragraphe (U+2028, U+2029) ne sont pas admis ici\u{202F}: le texte tient sur une seule ligne.",
    err_marks: |n| format!("Trop d’accents ou de signes sur une même lettre\u{202F}: {n} au plus."),
    err_invisible: "Ce champ n’affiche rien\u{202F}: il ne contient que des caractères invisibles. Saisissez un texte visible.",
    err_questions_count: |min, max| {
        format!(
            "Un sondage doit compter au moins {min} question avec au moins deux réponses, et au plus {max} questions."
        )
    },
    err_options_count: |min, max| format!("Une question doit proposer entre {min} et {max} réponses."),
    err_duplicate: |n| format!("Cette réponse est identique à la réponse {n} de cette question."),
    err_lookalike: |n| {
        format!(
            "Cette réponse ressemble à s’y méprendre à la réponse {n} de cette question, bien que ses caractères diffèrent (une lettre d’un autre alphabet, ou un caractère invisible). Les participants ne pourraient pas les distinguer\u{202F}: rendez-les visiblement différentes."
        )
    },
    err_choice: "Veuillez choisir l’une des valeurs proposées.",
    err_generic: "Cette valeur n’est pas valable.",
    err_rate_limited: |m| {
        if m <= 1 {
            "Vous avez créé de nombreux sondages en peu de temps. Veuillez réessayer dans une minute.".into()
        } else {
            format!("Vous avez créé de nombreux sondages en peu de temps. Veuillez réessayer dans {m} minutes.")
        }
    },
    err_unavailable: "Le service est très sollicité en ce moment et rien n’a été enregistré. Veuillez renvoyer le formulaire dans un instant.",

    created_title: "Votre sondage est prêt",
    created_share: "Lien de participation",
    created_share_hint: "Envoyez-le aux personnes qui doivent répondre.",
    created_results: "Lien des résultats",
    created_results_private: "Les résultats sont privés\u{202F}: cette page ne les montre qu’à qui possède la clé d’administration.",
    created_admin: "Lien d’administration",
    created_admin_hint: "Pour voir les résultats, gérer ou supprimer le sondage.",
    created_warning_title: "Enregistrez dès maintenant le lien d’administration",
    created_warning: "Il ne s’affiche que maintenant, et quiconque le possède peut gérer le sondage.",
    copy: "Copier",
    copied: "Copié",
    open_poll: "Ouvrir le sondage",

    status_open: "Ouvert aux réponses",
    status_closed: "Fermé",
    erased_on: |d| format!("Sera effacé le {d}"),
    created_on: |d| format!("Créé le {d}"),
    results_after_vote: "Chaque personne qui vote, juste après son vote (et vous)",
    results_after_close: "Toute personne qui a le lien, une fois le vote clos",
    field_closes_on: "Fin du vote le (facultatif)",
    field_closes_on_hint: "À partir de ce jour, le sondage n’accepte plus de réponses\u{202F}; ses résultats restent jusqu’à son effacement. Laissez vide pour clore le sondage vous-même.",
    field_shuffle: "Présenter les réponses dans un ordre aléatoire à chaque visite",
    field_shuffle_hint: "Pour qu’aucune réponse ne soit avantagée par sa place en tête. Les résultats gardent votre ordre.",
    closes_on: |d| format!("Fin du vote le {d}"),
    closed_on: |d| format!("Vote clos le {d}"),
    err_not_a_day: "Indiquez un jour, ou laissez le champ vide.",
    err_deadline_not_after_today: "Le jour de fin doit être postérieur à aujourd’hui. Pour arrêter le vote maintenant, fermez le sondage.",
    err_deadline_after_expiry: |d| format!("Le jour de fin doit précéder le jour d’effacement du sondage ({d})."),
    err_expires_before_deadline: |d| {
        format!("Le sondage serait effacé avant son jour de fin ({d}). Déplacez ou retirez d’abord le jour de fin.")
    },
    withheld_title: "Résultats pas encore visibles",
    withheld_after_vote: "Ce sondage montre ses résultats à chaque personne juste après son vote, ainsi qu’à la personne qui l’a créé.",
    withheld_after_close: "Ce sondage montre ses résultats à tout le monde une fois le vote clos. D’ici là, seule la personne qui l’a créé peut les voir.",
    withheld_after_close_on: |d| {
        format!(
            "Ce sondage montre ses résultats à tout le monde une fois le vote clos, au plus tard le {d}. D’ici là, seule la personne qui l’a créé peut les voir."
        )
    },
    voted_results: "Merci, votre réponse est comptée. Voici les résultats à ce stade.",
    settings_heading: "Réglages",
    settings_save: "Enregistrer les réglages",
    settings_done: "Réglages enregistrés.",

    vote_intro: "Répondez aux questions ci-dessous\u{202F}; vous pouvez laisser de côté celles qui ne sont pas obligatoires. Votre participation est anonyme\u{202F}: seul le jour de l’envoi est conservé avec elle.",
    vote_submit: "Envoyer ma réponse",
    already_voted: "Ce navigateur a déjà envoyé une réponse à ce sondage.",
    closed_title: "Ce sondage est fermé",
    closed_text: "Il n’accepte plus de réponses.",
    see_results: "Voir les résultats",
    err_no_answer: "Veuillez répondre à au moins une question.",
    err_vote_form: "Ce formulaire a été modifié\u{202F}: il contient des réponses qu’aucune question de ce sondage n’accepte. Vérifiez vos réponses et envoyez-les de nouveau.",
    err_ballot_used: "Cette réponse a déjà été comptée. Chaque formulaire ne peut être envoyé qu’une fois.",
    err_ballot_expired: "Ce formulaire a expiré. Vos choix sont conservés ci-dessous\u{202F}: veuillez les renvoyer.",
    create_sent_title: "Ce formulaire a déjà été envoyé",
    create_sent_text: [
        "Votre sondage a été créé au premier envoi de ce formulaire. Le formulaire est revenu (par un retour en arrière ou en rechargeant la page), et rien de nouveau n’a été créé.",
        "Les liens du sondage n’ont été affichés qu’une fois, juste après sa création. Si vous avez enregistré le lien d’administration, ouvrez-le\u{202F}: la page d’administration affiche le lien de participation et les résultats.",
        "Sans le lien d’administration, personne ne peut vous redonner les liens, pas même nous\u{202F}: nous ne conservons qu’une empreinte de sa clé, et le lien de participation ne peut pas être retrouvé sans lui. Si vous avez ouvert le sondage depuis cette page, son adresse figure dans l’historique de votre navigateur.",
    ],
    err_create_expired: "Ce formulaire a expiré. Ce que vous avez saisi est conservé ci-dessous\u{202F}: veuillez l’envoyer à nouveau.",
    err_throttled: "De nombreuses réponses à ce sondage sont venues de votre réseau ces dernières minutes. Veuillez réessayer un peu plus tard.",
    err_voted_from_network: |n| {
        let counted = match n {
            0 | 1 => "Une réponse à ce sondage venant de votre réseau a déjà été comptée ces dernières 24\u{A0}heures."
                .to_owned(),
            n => format!(
                "{} réponses à ce sondage venant de votre réseau ont déjà été comptées ces dernières 24\u{A0}heures.",
                super::grouped(n as usize, "\u{202F}")
            ),
        };
        format!(
            "{counted} Si beaucoup de personnes partagent cette connexion, l’auteur du sondage peut choisir des codes d’invitation ou la limite large («\u{202F}une salle sur une connexion\u{202F}») sur la page de gestion du sondage."
        )
    },
    err_paced: "De nombreuses réponses longues à ce sondage arrivent en même temps de votre réseau. Veuillez renvoyer la vôtre dans un instant.",
    err_vote_not_saved: "Votre réponse n’a pas pu être enregistrée pour l’instant. Vos choix sont conservés ci-dessous\u{202F}: veuillez les renvoyer.",
    thanks_title: "Merci\u{202F}!",
    thanks_text: "Votre réponse a bien été comptée.",
    thanks_private: "Les résultats de ce sondage ne sont visibles que par la personne qui l’a créé.",

    results_heading: "Résultats",
    responses_total: |n| match n {
        0 => "Aucune participation pour l’instant".into(),
        1 => "1 participation".into(),
        _ => format!("{n} participations"),
    },
    answered: |n| match n {
        0 | 1 => format!("{n} personne a répondu à cette question"),
        _ => format!("{n} personnes ont répondu à cette question"),
    },
    col_answer: "Réponse",
    col_votes: "Votes",
    col_share: "Pourcentage",
    by_day_heading: "Participations par jour",
    col_day: "Jour",
    col_responses: "Participations",
    no_responses: "Personne n’a encore répondu.",

    private_results_title: "Ces résultats sont privés",
    private_results_text: "Saisissez la clé d’administration du sondage pour les consulter. Si vous ouvrez cette page avec le lien d’administration, la clé est remplie automatiquement.",
    token_label: "Clé d’administration",
    token_hint: "La partie du lien d’administration qui suit le signe #.",
    token_show_results: "Afficher les résultats",
    token_open_admin: "Ouvrir la page d’administration",
    err_bad_token: "Cette clé n’appartient pas à ce sondage. Vérifiez que vous avez copié le lien d’administration en entier.",

    admin_title: "Gérer le sondage",
    admin_intro: "Ouvrez cette page avec le lien d’administration reçu lors de la création du sondage, ou collez la clé d’administration ci-dessous.",
    links_heading: "Liens",
    status_heading: "État",
    close_poll: "Fermer le sondage",
    reopen_poll: "Rouvrir le sondage",
    closed_done: "Le sondage est fermé. Il n’accepte plus de réponses.",
    reopened_done: "Le sondage est de nouveau ouvert.",
    expiry_heading: "Date d’effacement",
    expiry_label: "Effacer le sondage, à compter d’aujourd’hui, au bout de",
    expiry_submit: "Changer la date d’effacement",
    expiry_done: |d| format!("Le sondage sera désormais effacé le {d}."),
    versions_heading: "Versions linguistiques",
    versions_intro: "Ajoutez une traduction pour que chacun lise le sondage dans sa langue. Une version reprend les mêmes questions et réponses, dans le même ordre.",
    version_heading: |name| format!("Version en {name}"),
    version_exists: "Cette version est publiée.",
    version_missing: "Il n’existe pas encore de version dans cette langue.",
    version_title: "Titre",
    original: |t| format!("Original\u{202F}: {t}"),
    version_save: "Enregistrer cette version",
    version_remove: "Supprimer cette version",
    version_saved: |name| format!("La version en {name} est enregistrée."),
    version_removed: |name| format!("La version en {name} est supprimée."),
    delete_heading: "Supprimer le sondage",
    delete_text: "Cette action efface définitivement le sondage et toutes ses réponses.",
    delete_button: "Supprimer le sondage…",
    delete_confirm_title: "Supprimer définitivement ce sondage\u{202F}?",
    delete_confirm_text: "Le sondage, ses réponses et ses versions linguistiques seront effacés immédiatement. Cette action est irréversible.",
    delete_confirm_button: "Oui, le supprimer définitivement",
    delete_cancel: "Non, le conserver",
    deleted_title: "Le sondage est supprimé",
    deleted_text: "Le sondage et toutes ses réponses ont été effacés.",

    not_found_title: "Sondage introuvable",
    not_found_text: "Ce sondage n’existe pas ou a été effacé. Un sondage est effacé à sa date d’effacement, ou plus tôt si son auteur le supprime.",
    page_not_found_title: "Page introuvable",
    page_not_found_text: "Il n’y a aucune page à cette adresse.",
    bad_form: "Le formulaire n’a pas pu être lu. Veuillez recharger la page et réessayer.",
    too_large: "Le formulaire est trop volumineux pour être accepté.",
    media_kind_names: ["image", "son", "vidéo"],
    media_poll_legend: "Image, son ou vidéo pour tout le sondage (facultatif)",
    media_question_legend: "Image, son ou vidéo pour cette question (facultatif)",
    media_file: "Fichier",
    media_file_hint: |i, a, v| {
        format!(
            "Images (JPEG, PNG, WebP, GIF) jusqu’à {i}\u{a0}Mo, sons (MP3, Ogg, M4A) jusqu’à {a}\u{a0}Mo, vidéos (MP4 en H.264, WebM) jusqu’à {v}\u{a0}Mo. La position, l’appareil et les autres détails cachés sont retirés avant que le fichier soit conservé."
        )
    },
    media_alt: "Description",
    media_alt_hint: "Pour une image, obligatoire\u{202F}: ce qu’elle montre, pour les personnes qui ne la voient pas. Pour un son ou une vidéo\u{202F}: une légende facultative.",
    media_drop: "Retirer ce fichier",
    media_open: "Ouvrir le fichier",
    err_media_type: "Ce type de fichier n’est pas accepté. Choisissez une image JPEG, PNG, WebP ou GIF, un son MP3, Ogg ou M4A, ou une vidéo MP4 (H.264) ou WebM.",
    err_media_too_large: |kind, mb| format!("Ce fichier ({kind}) est trop volumineux\u{202F}: {mb}\u{a0}Mo au plus."),
    err_media_pixels: |mp| format!("Cette image a trop de pixels\u{202F}: {mp}\u{a0}mégapixels au plus."),
    err_media_corrupt: "Ce fichier est endommagé ou incomplet et n’a pas pu être lu.",
    err_media_codec: "Ce fichier utilise un codage qui n’est pas accepté. Les vidéos doivent être en H.264 dans un MP4, ou en VP8, VP9 ou AV1 dans un WebM\u{202F}; les sons en MP3, en Opus ou Vorbis dans un Ogg, ou en AAC dans un M4A.",
    err_media_empty: "Ce fichier est vide.",
    err_media_busy: "Trop de fichiers sont en cours de traitement. Veuillez renvoyer le formulaire dans un instant.",
    err_media_full: "Le serveur conserve trop de fichiers pour des formulaires en cours en ce moment. Veuillez réessayer plus tard.",
    err_media_quota: "Vous avez trop de fichiers en attente dans des formulaires pas encore envoyés. Créez votre sondage ou retirez les fichiers inutiles, puis réessayez.",
    err_media_lost: "Le fichier choisi plus tôt n’est plus conservé par le serveur. Veuillez le choisir à nouveau.",
    err_alt_required: "Décrivez l’image pour les personnes qui ne la voient pas.",
    media_heading: "Images, sons et vidéos",
    media_intro: "Joignez un fichier au sondage et un à chaque question. Un nouveau fichier remplace l’ancien, qui est effacé.",
    media_slot: "Affiché avec",
    media_slot_poll: "Tout le sondage",
    media_attach: "Joindre le fichier",
    media_attached: "Le fichier a été joint.",
    media_removed: "Le fichier a été retiré et effacé.",
    media_none: "Aucun fichier n’est joint.",
    media_remove: "Retirer et effacer",
    cross_site: "Ce formulaire a été envoyé depuis un autre site et a été refusé.",
    method_not_allowed: "Cette page ne peut pas être utilisée de cette façon.",
    error_title: "Une erreur s’est produite",
    error_text: "Rien n’a été modifié. Veuillez réessayer dans un instant.",
    back_home: "Retour à la page d’accueil",

    privacy_title: "Confidentialité",
    privacy_intro: "anonpoll conserve le moins de données possible, et seulement pendant la durée de vie d’un sondage. Voici précisément ce qui est conservé, où et pendant combien de temps.",
    privacy_table_caption: "Ce qui est conservé",
    privacy_col_what: "Quoi",
    privacy_col_where: "Où",
    privacy_col_until: "Combien de temps",
    privacy_rows: ROWS,
    privacy_throttle_row: |m| {
        (
            "Contre le bourrage des urnes\u{202F}: une empreinte de votre adresse réseau associée au sondage, calculée avec une clé secrète, et le nombre de ses réponses récentes".into(),
            "Mémoire du serveur uniquement".into(),
            format!("{} minutes au plus, puis la clé elle-même est détruite", 2 * m),
        )
    },
    privacy_never_heading: "Ce qui n’est jamais conservé",
    privacy_never: [
        "Aucun cookie\u{202F}: ce site n’en dépose aucun, sur aucune page.",
        "Aucune adresse réseau (IP) n’est enregistrée ni écrite dans un journal.",
        "Ni nom, ni compte, ni adresse électronique, ni heure\u{202F}: les dates sont conservées au jour près.",
        "Aucun pistage, aucune publicité, et rien n’est chargé depuis d’autres sites.",
        "Effacé veut dire effacé\u{202F}: lorsqu’un sondage est supprimé ou atteint sa date d’effacement, ses données sont écrasées dans la base, pas seulement masquées.",
    ],
    privacy_browser_heading: "Dans votre navigateur",
    privacy_browser: "Après votre réponse à un sondage, votre navigateur le note dans son stockage local, afin que la page du sondage puisse vous rappeler que vous avez déjà répondu. Cette note reste sur votre appareil et ne nous est jamais transmise. Elle est supprimée après la date d’effacement du sondage\u{202F}; vous pouvez aussi l’effacer à tout moment en supprimant les données de ce site dans votre navigateur. Le lien d’administration porte sa clé après le signe #, une partie de l’adresse que les navigateurs n’envoient jamais à un serveur. Si vous changez de langue en répondant, vos choix attendent dans cet onglet la page suivante seulement.",
    required_mark: "(obligatoire)",
    choose_between: |min, max, n| match (min, max) {
        (1, m) if m == n => "Choisissez une ou plusieurs réponses.".into(),
        (a, b) if a == b => format!("Choisissez {a}\u{A0}réponses."),
        (1, b) => format!("Choisissez jusqu’à {b}\u{A0}réponses."),
        (a, b) => format!("Choisissez entre {a} et {b}\u{A0}réponses."),
    },
    rank_hint: "Donnez 1 à votre premier choix, 2 au suivant, et ainsi de suite. Vous pouvez n’en classer que certaines\u{202F}; les autres comptent après toutes celles que vous avez classées.",
    no_answer: "Pas de réponse",
    rank_none: "Non classée",
    rank_of: |o| format!("Rang de «\u{202F}{o}\u{202F}»"),
    rank_up: "Monter",
    rank_down: "Descendre",
    rank_now: |o, r| format!("«\u{202F}{o}\u{202F}» est maintenant au rang {r}."),
    rank_now_none: |o| format!("«\u{202F}{o}\u{202F}» n’est pas classée."),
    scale_hint: |lo, hi| format!("Choisissez une valeur de {lo} à {hi}."),
    field_type: "Type de question",
    type_names: ["Une réponse", "Plusieurs réponses", "Classement", "Échelle", "Trouver une date"],
    avail_yes: "Oui",
    avail_if_need_be: "Si besoin",
    avail_no: "Non",
    schedule_hint: "Pour chaque date, dites si vous pouvez venir. Une date laissée sans réponse compte comme non.",
    times_in: |zone| format!("Heures de {zone}."),
    all_day: "Toute la journée",
    weekdays: ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
    slot_day: |w, d| format!("{w} {d}"),
    best_slot: "Meilleure date",
    slots_best_first: "Les meilleures dates d’abord",
    err_not_a_slot: "Saisissez une date qui existe, et une heure (par exemple 18\u{A0}h\u{A0}30) si vous le souhaitez.",
    err_slot_order: |previous| {
        format!("Mettez les dates dans l’ordre, chacune une fois\u{202F}: celle-ci doit venir après {previous}.")
    },
    err_time_zone: "Saisissez un fuseau horaire comme Europe/Paris, ou laissez vide.",
    err_times: "Écrivez les heures comme 18\u{A0}h\u{A0}00, séparées par des virgules.",
    err_slots_count: |min, max| {
        format!("Proposez entre {min} et {max} dates et heures (chaque heure commune compte une fois par date).")
    },
    field_slots: "Dates",
    field_slots_hint: "Un jour, et une heure si vous le souhaitez. Présentées dans l’ordre sur le sondage.",
    field_slot_day: |n| format!("Date {n}"),
    field_slot_time: |n| format!("Heure {n} (facultative)"),
    field_times: "Les mêmes heures à chaque date (facultatif)",
    field_times_hint: "Par exemple 18\u{A0}h\u{A0}00, 20\u{A0}h\u{A0}30\u{202F}: chaque date sans heure propre est proposée à chacune de ces heures.",
    field_time_zone: "Fuseau horaire (facultatif)",
    field_time_zone_hint: "Par exemple Europe/Paris. Affiché à côté des heures\u{202F}; rien n’est converti.",
    add_slot: "Ajouter une date",
    field_required: "Réponse obligatoire",
    field_min_choices: "Au moins (réponses)",
    field_max_choices: "Au plus (réponses)",
    field_choices_hint: "Laissez vide pour la règle habituelle\u{202F}: au moins une, au plus toutes.",
    field_scale_min: "De",
    field_scale_max: "À",
    field_scale_min_named: "la plus petite valeur de l’échelle (De)",
    field_scale_max_named: "la plus grande valeur de l’échelle (À)",
    field_min_label: "Libellé du bas de l’échelle (facultatif)",
    field_max_label: "Libellé du haut de l’échelle (facultatif)",
    err_range: |a, b| {
        let (a, b) = (super::grouped(a, "\u{202F}"), super::grouped(b, "\u{202F}"));
        if a == b { format!("Seul {a} est possible ici.") } else { format!("Indiquez un nombre entier de {a} à {b}.") }
    },
    err_not_for_type: "Ce champ ne s’applique pas à ce type de question.",
    err_choice_count: |q, a, b| {
        if a == b {
            format!("Question {q}\u{202F}: choisissez exactement {a}\u{A0}réponses.")
        } else {
            format!("Question {q}\u{202F}: choisissez entre {a} et {b}\u{A0}réponses.")
        }
    },
    err_repeated_rank: |q| {
        format!("Question {q}\u{202F}: deux réponses ont le même rang. Donnez chaque rang une seule fois.")
    },
    err_rank_gap: |q| {
        format!("Question {q}\u{202F}: les rangs doivent se suivre, 1, 2, 3 et ainsi de suite, sans trou.")
    },
    err_off_scale: |q, a, b| format!("Question {q}\u{202F}: choisissez une valeur de {a} à {b}."),
    err_no_such_option: |q| {
        format!("Question {q}\u{202F}: cette réponse ne fait pas partie de ses choix. Veuillez choisir à nouveau.")
    },
    err_unanswered: |q| format!("La question {q} demande une réponse."),
    first_choices: "Premiers choix",
    ranking_heading: "Classement général",
    ranking_none: "Personne n’a encore classé les options.",
    place: |n| if n == 1 { "1er".into() } else { format!("{n}e") },
    place_shared: |p| format!("{p} ex æquo"),
    col_place: "Rang",
    pairwise_heading: "Duels",
    pairwise_hint: "Chaque case\u{202F}: combien de personnes ont classé la réponse de la ligne avant celle de la colonne. Le classement général en découle par la méthode de Schulze.",
    col_value: "Valeur",
    scale_mean: "Moyenne",
    scale_median: "Médiane",
    colon: "\u{202F}: ",
    tagline: "Des sondages anonymes. Sans compte, sans cookies, sans pistage.",
    problems_heading: "Veuillez vérifier les points suivants",
    media_kept: "Fichier conservé",
    media_replace: "Choisir un autre fichier à la place",
    leading: "Le plus de votes",
    share_qr: "Code QR du lien de participation",
    remove_option: |n| format!("Retirer la réponse {n}"),
    results_live: "Mis à jour automatiquement tant que cette page est ouverte.",
    invite_label: "Votre code d’invitation",
    invite_hint: "Ce sondage accepte une réponse par code d’invitation. Le code figure sur votre invitation.",
    invite_hint_link: "Un lien d’invitation le remplit pour vous.",
    err_invite_missing: "Ce sondage accepte une réponse par code d’invitation\u{202F}: veuillez saisir le vôtre.",
    err_invites_sent: "Ces codes ont été émis au premier envoi du formulaire et ne peuvent plus être affichés (anonpoll n’en garde aucune copie lisible). Rien de plus n’a été émis. Sur la page de gestion du sondage, vous pouvez émettre un nouveau lot.",
    err_invites_expired: "Ce formulaire a expiré\u{202F}; rien n’a été émis. Veuillez l’envoyer à nouveau.",
    err_invite_not_a_code: "Ceci n’est pas un code d’invitation\u{202F}: un code compte 20\u{A0}lettres et chiffres (majuscules, espaces et tirets n’ont pas d’importance). Veuillez le vérifier.",
    err_invite_refused: "Ce code d’invitation n’est pas l’un de ceux de ce sondage, ou il a déjà servi. Vos choix sont conservés ci-dessous.",
    err_too_many_invites: |issued, max| {
        format!("Un sondage peut avoir au plus {max}\u{A0}codes d’invitation\u{202F}; celui-ci en a {issued}.")
    },
    field_duplicate: "Limite des réponses répétées",
    duplicate_network: |n| match n {
        0 => "Une limite par réseau contre les envois rapprochés (le choix habituel)".into(),
        1 => "Une réponse par réseau et par jour (le choix habituel)".into(),
        n => format!("{} réponses par réseau et par jour (le choix habituel)", super::grouped(n as usize, "\u{202F}")),
    },
    duplicate_network_hint: |n| {
        let rule = match n {
            0 => "Chaque connexion internet ne peut envoyer à ce sondage qu’un nombre limité de réponses en quelques minutes\u{202F}; elle n’est pas limitée à une seule.".to_owned(),
            1 => "Chaque connexion internet peut envoyer une réponse par jour à ce sondage.".to_owned(),
            n => format!("Chaque connexion internet peut envoyer {} réponses par jour à ce sondage.", super::grouped(n as usize, "\u{202F}")),
        };
        format!(
            "{rule} Rien n’en est enregistré. Convient à un lien diffusé largement\u{202F}; si beaucoup de personnes partagent une connexion (une classe, un bureau), choisissez des codes d’invitation ou la limite large."
        )
    },
    duplicate_invite: "Codes d’invitation\u{202F}: une réponse par code",
    duplicate_invite_hint: "Vous distribuez des codes depuis la page de gestion du sondage\u{202F}; chaque code ne sert qu’une fois. Personne, pas même vous, ne peut savoir quel code a donné quelle réponse.",
    duplicate_none: "Une limite large (une salle sur une connexion)",
    duplicate_none_hint: "Toute personne qui a le lien peut répondre plusieurs fois, une même connexion jusqu’à dix fois la limite habituelle. Pour une salle de personnes qui partagent une connexion, si vous leur faites confiance.",
    invites_heading: "Codes d’invitation",
    invites_intro: "Chaque code permet à une personne de répondre une fois. Les codes ne s’affichent qu’au moment où vous les créez\u{202F}: imprimez-les ou enregistrez-les aussitôt. Personne ne peut savoir quel code a donné quelle réponse.",
    invites_not_in_use: "Ce sondage ne demande pas de code d’invitation pour l’instant\u{202F}: les codes ne comptent qu’une fois «\u{202F}Codes d’invitation\u{202F}» choisi dans les réglages.",
    invites_status: |issued, used| {
        let codes = if issued <= 1 { "code créé" } else { "codes créés" };
        let used_word = if used <= 1 { "utilisé" } else { "utilisés" };
        format!("{issued}\u{A0}{codes}, {used}\u{A0}{used_word}.")
    },
    invites_count_label: "Nombre de nouveaux codes",
    invites_count_hint: "De 1 à 1\u{202F}000 à la fois.",
    invites_issue: "Créer et afficher les cartes à imprimer",
    invites_issue_csv: "Créer et télécharger en CSV",
    invites_sheet_title: "Nouveaux codes d’invitation",
    invites_sheet_count: |n| {
        if n == 1 {
            "1\u{A0}nouveau code pour ce sondage.".into()
        } else {
            format!("{n}\u{A0}nouveaux codes pour ce sondage.")
        }
    },
    invites_once: "Ces codes ne s’affichent que maintenant. anonpoll ne les garde pas sous une forme lisible et ne pourra pas les montrer à nouveau\u{202F}: imprimez cette page (ou enregistrez-la en PDF depuis la fenêtre d’impression) avant de la quitter. Une copie enregistrée de la page ne contient pas la clé d’administration.",
    invites_print_hint: "Imprimez cette page, puis découpez une carte par personne.",
    print_button: "Imprimer",
    invite_card_text: "Vous avez une invitation à répondre à ce sondage. Scannez le code ou ouvrez le lien\u{202F}; une réponse par code.",
    invite_card_text_open: "Vous avez une invitation à répondre à ce sondage. Scannez le code ou ouvrez le lien.",
    invite_card_code: "Code d’invitation",
    invite_card_link: "Lien d’invitation",
    invite_qr: "Code QR du lien d’invitation",
    invites_back: "Retour à la gestion du sondage",
    invite_field_missing: "Saisissez le code de votre invitation.",
    invite_field_not_a_code: "Un code compte 20\u{A0}lettres et chiffres.",
    invite_field_refused: "Ce code n’est pas l’un de ceux de ce sondage, ou il a déjà servi.",
    vote_changes_label: "Les participants peuvent modifier ou retirer leur réponse",
    vote_changes_hint: "Chaque participant reçoit un reçu, un code que lui seul détient, avec lequel il peut voir, modifier ou retirer sa propre réponse jusqu’à la clôture. Il n’est conservé que sous forme d’empreinte à côté de la réponse\u{202F}: il ne dit à personne qui a répondu.",
    receipt_heading: "Votre reçu",
    receipt_text: "Avec ce reçu, vous pouvez voir, modifier ou retirer votre réponse jusqu’à la clôture. Il ne s’affiche que maintenant\u{202F}: gardez-en une copie. Quiconque le possède peut modifier votre réponse.",
    receipt_kept: "Ce navigateur le garde aussi pour ce sondage (dans son propre stockage, pas dans un cookie) jusqu’à l’effacement du sondage.",
    receipt_label: "Reçu",
    receipt_link: "Lien vers votre réponse (il contient le reçu)",
    receipt_open: "Voir ou modifier ma réponse",
    receipt_remembered: "Vous avez répondu à ce sondage depuis ce navigateur.",
    receipt_forget: "Oublier mes reçus dans ce navigateur",
    own_ballot_title: "Votre réponse",
    own_ballot_prompt: "Saisissez le reçu obtenu en répondant pour voir, modifier ou retirer votre réponse.",
    own_ballot_show: "Afficher ma réponse",
    own_ballot_intro: "Voici votre réponse telle qu’elle est comptée. Modifiez-la et enregistrez, ou retirez-la.",
    own_ballot_change: "Enregistrer mes modifications",
    own_ballot_withdraw: "Retirer ma réponse",
    own_ballot_withdraw_hint: "Le retrait effacera votre réponse\u{202F}: elle ne sera plus comptée. Ce sera définitif.",
    own_ballot_changed: "Votre réponse a été modifiée.",
    own_ballot_withdrawn_title: "Réponse retirée",
    own_ballot_withdrawn_text: "Votre réponse a été effacée et n’est plus comptée.",
    err_receipt_not_a_receipt: "Un reçu compte 24 lettres et chiffres.",
    err_receipt_unknown: "Aucune réponse à ce sondage n’a ce reçu. Elle a peut-être été retirée.",
    err_receipt_changes_off: "Ce sondage ne permet plus de modifier ou de retirer les réponses.",
    err_receipt_closed: "Le vote est clos\u{202F}: les réponses ne peuvent plus être vues, modifiées ni retirées.",
    keep_admin_label: "Garder le lien d’administration dans ce navigateur",
    keep_admin_hint: "Rien ne nous est transmis\u{202F}; toute personne qui utilise ce navigateur pourra alors gérer le sondage.",
    opens_new_tab: "(s’ouvre dans un nouvel onglet)",
    my_polls_heading: "Vos sondages sur cet appareil",
    my_polls_hint: "Les liens d’administration que vous avez choisi de garder dans ce navigateur. Ils restent sur cet appareil et ne nous sont jamais transmis\u{202F}; chacun est retiré après la date d’effacement de son sondage.",
    my_polls_forget: "Oublier",
    answer_again: "Répondre à nouveau (une autre personne sur cet appareil)",
    receipt_open_nth: |n, r| format!("Voir ou modifier la réponse {n} (reçu {r}…)"),
    receipt_have: "Vous avez répondu sur un autre appareil\u{202F}? Voir ou modifier cette réponse avec son reçu",
    invites_sent_title: "Ces codes ont déjà été émis",
    created_share_hint_invite: "Le lien seul ne permet à personne de répondre\u{202F}: émettez ensuite les codes d’invitation, puis distribuez les cartes ou les liens d’invitation.",
    created_next_invites: "Étape suivante\u{202F}: émettre les codes d’invitation",
    created_save_first: "Copiez ou gardez d’abord le lien d’administration\u{202F}: seule cette page l’affiche. Appuyez de nouveau sur le bouton pour continuer sans lui.",
    vote_not_sent: "Votre réponse n’a pas été envoyée. Veuillez vérifier les points suivants\u{202F}:",
    vote_err_choice_count: |a, b| match (a, b) {
        (1, 1) => "Choisissez exactement une réponse.".into(),
        _ if a == b => format!("Choisissez exactement {a}\u{A0}réponses."),
        (1, b) => format!("Choisissez jusqu’à {b}\u{A0}réponses."),
        _ => format!("Choisissez entre {a} et {b}\u{A0}réponses."),
    },
    vote_max_reached: |max| format!("Au plus {max}\u{A0}réponses\u{202F}: décochez-en une pour en choisir une autre."),
    vote_err_repeated_rank: "Deux réponses ont le même rang. Donnez chaque rang une seule fois.",
    vote_err_rank_gap: "Les rangs doivent se suivre, 1, 2, 3 et ainsi de suite, sans trou.",
    vote_err_off_scale: |a, b| format!("Choisissez une valeur de {a} à {b}."),
    vote_err_unanswered: "Cette question demande une réponse.",
    vote_err_no_such_option: "Cette réponse ne fait pas partie des choix de la question. Veuillez choisir à nouveau.",
    withheld_vote: "Répondre au sondage pour voir les résultats",
    withheld_open_poll: "Aller au sondage",
    own_ballot_withdraw_code: "Le code d’invitation avec lequel vous avez répondu restera utilisé.",
    err_questions_none: "Ajoutez au moins une question\u{202F}: avec au moins deux réponses, ou une échelle.",
    err_questions_many: |max| format!("Un sondage compte au plus {max}\u{A0}questions."),
    err_scale_to_above: |from| format!("Choisissez une fin supérieure au début ({from})."),
    pairwise_hint_cards: "Chaque carte est une réponse\u{202F}; chaque ligne\u{202F}: combien de personnes l’ont classée avant la réponse nommée sur cette ligne. Le classement général en découle par la méthode de Schulze.",

    create_another: "Créer un autre sondage",
    create_another_hint: "Le formulaire revient avec ce que vous avez saisi, pour un nouveau sondage (un fichier éventuel est à choisir de nouveau).",
    voter_results_link: "Vous avez déjà répondu\u{202F}? Voir les résultats avec votre reçu",
    voter_results_hint: "Vous avez déjà répondu\u{202F}? Le reçu obtenu après votre réponse affiche les résultats.",
    privacy_network_day_row: |n| {
        let what = match n {
            0 | 1 => "Une réponse par jour et par réseau (la règle habituelle)".to_owned(),
            n => format!(
                "{} réponses par jour et par réseau (la règle habituelle)",
                super::grouped(n as usize, "\u{202F}")
            ),
        };
        (
            format!("{what}\u{202F}: une empreinte à clé de l’adresse de votre réseau avec le sondage"),
            "Mémoire du serveur uniquement".into(),
            "Deux jours au plus, puis la clé elle-même est jetée".into(),
        )
    },
    edited_on: |d| format!("Modifié le {d}"),
    edit_heading: "Titre et questions",
    edit_intro_open: "Personne n’a encore répondu\u{202F}: vous pouvez corriger tous les textes, et ajouter ou retirer des questions et des réponses. Ajouter ou retirer en supprime les images, sons et vidéos des questions (ceux du sondage restent).",
    edit_intro_locked: "Le sondage a des réponses, ses questions et ses réponses restent donc telles quelles\u{202F}: vous pouvez encore en corriger les textes (une faute de frappe, par exemple). Les réponses gardent leur sens.",
    edit_shown: "Une fois une modification enregistrée, les pages du sondage indiquent qu’il a été modifié, et quel jour.",
    edit_versions_note: "Ajouter ou retirer des questions ou des réponses supprime les versions linguistiques, qui ne correspondraient plus. Ajoutez-les de nouveau ensuite.",
    edit_save: "Enregistrer les modifications",
    edit_saved: "Vos modifications sont enregistrées.",
    edit_saved_versions_dropped: "Vos modifications sont enregistrées. Les versions linguistiques ont été supprimées\u{202F}: elles ne correspondaient plus aux questions.",
    err_fixed_by_responses: "Ceci ne peut plus changer\u{202F}: le sondage a des réponses. Seuls les textes peuvent être corrigés.",
    err_poll_changed: "Les questions du sondage ont changé depuis l’ouverture de cette page, votre réponse n’a donc pas été comptée. Les voici telles qu’elles sont maintenant\u{202F}: veuillez répondre de nouveau.",
    admin_done_again: "Pour continuer à gérer le sondage, ouvrez de nouveau votre lien d’administration ou saisissez la clé d’administration ci-dessous.",
    invites_shown_done: "Les codes d’invitation émis ont été montrés une seule fois et ne peuvent plus être affichés (anonpoll n’en garde aucune copie lisible)\u{202F}; rien de plus n’a été émis. Vous pouvez en émettre un nouveau lot ci-dessous, sous «\u{202F}Codes d’invitation\u{202F}».",
};
