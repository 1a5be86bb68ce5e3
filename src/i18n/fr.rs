//! Français : registre soutenu, vouvoiement ; espace fine insécable (U+202F)
//! avant `? ! ; %`, espace insécable (U+00A0) avant `:`.

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

const ROWS: [KeptRow; 8] = [
    (
        "Le sondage\u{A0}: titre, langue, questions, réponses proposées, versions linguistiques et réglages",
        "Base de données",
        "Jusqu’à sa date d’effacement, ou jusqu’à ce que son auteur le supprime",
    ),
    ("Le jour de création du sondage et sa date d’effacement", "Base de données", "Comme le sondage"),
    (
        "Une empreinte (SHA-256) de la clé d’administration, jamais la clé elle-même",
        "Base de données",
        "Comme le sondage",
    ),
    (
        "Chaque participation\u{A0}: le jour de son envoi et la réponse choisie à chaque question",
        "Base de données",
        "Comme le sondage",
    ),
    ("Le nombre de voix par réponse et par jour", "Base de données", "Comme le sondage"),
    (
        "Pour limiter la création de sondages\u{A0}: une empreinte chiffrée de votre adresse réseau et les instants de vos dernières créations",
        "Mémoire du serveur uniquement",
        "Deux heures au plus, puis la clé elle-même est détruite",
    ),
    (
        "Un code aléatoire par formulaire de réponse déjà envoyé, pour qu’il ne soit pas compté deux fois",
        "Mémoire du serveur uniquement",
        "Au plus tard jusqu’à la fin du lendemain (UTC)",
    ),
    (
        "Les sondages auxquels vous avez répondu dans ce navigateur, avec leur date d’effacement",
        "Votre navigateur (localStorage), jamais transmis",
        "Jusqu’à la date d’effacement du sondage, ou jusqu’à ce que vous effaciez les données de ce site",
    ),
];

pub const FR: Catalogue = Catalogue {
    lang_names: ["anglais", "français", "allemand", "italien"],
    date: |y, m, d| {
        let day = if d == 1 { "1er".to_owned() } else { d.to_string() };
        format!("{day} {} {y}", MONTHS[usize::from(m.clamp(1, 12)) - 1])
    },
    percent: |p| format!("{}\u{202F}%", format!("{p:.1}").replace('.', ",")),

    skip_link: "Aller au contenu",
    nav_label: "Navigation principale",
    nav_create: "Nouveau sondage",
    nav_privacy: "Confidentialité",
    lang_switch_label: "Langue",
    footer: "Des sondages anonymes, sans compte, sans cookies ni pistage.",

    create_title: "Créer un sondage",
    create_intro: "Aucun compte n’est nécessaire. Donnez un titre à votre sondage et au moins une question avec deux réponses. Les lignes vides sont ignorées.",
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
    questions_hint: "Jusqu’à 20 questions, chacune avec 2 à 12 réponses. Les participants choisissent une réponse par question.",
    question_legend: |n| format!("Question {n}"),
    field_question: "Question",
    field_option: |n| format!("Réponse {n}"),
    add_option: "Ajouter une réponse",
    add_question: "Ajouter une question",
    remove_question: "Supprimer cette question",
    move_up: "Monter",
    submit_create: "Créer le sondage",
    errors_heading: "Le sondage n’a pas été créé. Veuillez vérifier les points suivants\u{A0}:",

    err_required: "Veuillez remplir ce champ.",
    err_too_long: |n| format!("Veuillez utiliser au maximum {n} caractères."),
    err_control: "Les retours à la ligne et les tabulations ne sont pas admis ici.",
    err_questions_count: |min, max| {
        format!(
            "Un sondage doit compter au moins {min} question avec au moins deux réponses, et au plus {max} questions."
        )
    },
    err_options_count: |min, max| format!("Une question doit proposer entre {min} et {max} réponses."),
    err_duplicate: "Cette réponse figure deux fois dans la même question.",
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
    created_intro: "Conservez ces trois liens. Le sondage est dès maintenant ouvert.",
    created_share: "Lien de participation",
    created_share_hint: "Envoyez-le aux personnes qui doivent répondre.",
    created_results: "Lien des résultats",
    created_results_private: "Les résultats sont privés\u{A0}: cette page ne les montre qu’à qui possède la clé d’administration.",
    created_admin: "Lien d’administration",
    created_admin_hint: "Pour consulter les résultats, fermer ou rouvrir le sondage, changer sa date d’effacement, ajouter d’autres langues ou le supprimer.",
    created_warning_title: "Enregistrez dès maintenant le lien d’administration",
    created_warning: "Il ne s’affiche qu’une seule fois. Nous ne conservons qu’une empreinte de sa clé\u{A0}: personne, pas même nous, ne pourra vous le redonner. Quiconque le possède peut gérer le sondage.",
    copy: "Copier",
    copied: "Copié",
    open_poll: "Ouvrir le sondage",

    status_open: "Ouvert aux réponses",
    status_closed: "Fermé",
    erased_on: |d| format!("Effacé le {d}"),
    created_on: |d| format!("Créé le {d}"),

    vote_intro: "Choisissez une réponse par question\u{202F}; vous pouvez en laisser de côté. Votre participation est anonyme\u{A0}: seul le jour de l’envoi est conservé avec elle.",
    vote_submit: "Envoyer ma réponse",
    already_voted: "Ce navigateur a déjà envoyé une réponse à ce sondage.",
    closed_title: "Ce sondage est fermé",
    closed_text: "Il n’accepte plus de réponses.",
    see_results: "Voir les résultats",
    err_no_answer: "Veuillez répondre à au moins une question.",
    err_ballot_used: "Cette réponse a déjà été comptée. Chaque formulaire ne peut être envoyé qu’une fois.",
    err_ballot_expired: "Ce formulaire a expiré. Vos choix sont conservés ci-dessous\u{A0}: veuillez les renvoyer.",
    err_create_sent: "Ce formulaire a déjà créé son sondage. Les liens du sondage n’ont été affichés qu’une fois, juste après sa création, et ne peuvent plus l’être.",
    err_create_expired: "Ce formulaire a expiré. Ce que vous avez saisi est conservé ci-dessous\u{A0}: veuillez l’envoyer à nouveau.",
    err_throttled: "De nombreuses réponses à ce sondage sont venues de votre réseau ces dernières minutes. Veuillez réessayer un peu plus tard.",
    err_vote_not_saved: "Votre réponse n’a pas pu être enregistrée pour l’instant. Vos choix sont conservés ci-dessous\u{A0}: veuillez les renvoyer.",
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
    col_votes: "Voix",
    col_share: "Part",
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
    original: |t| format!("Original\u{A0}: {t}"),
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
            "Contre le bourrage des urnes\u{A0}: une empreinte chiffrée de votre adresse réseau associée au sondage, et le nombre de ses réponses récentes".into(),
            "Mémoire du serveur uniquement".into(),
            format!("{} minutes au plus, puis la clé elle-même est détruite", 2 * m),
        )
    },
    privacy_never_heading: "Ce qui n’est jamais conservé",
    privacy_never: [
        "Aucun cookie\u{A0}: ce site n’en dépose aucun, sur aucune page.",
        "Aucune adresse réseau (IP) n’est enregistrée ni écrite dans un journal.",
        "Ni nom, ni compte, ni adresse électronique, ni heure\u{A0}: les dates sont conservées au jour près.",
        "Aucun pistage, aucune publicité, et rien n’est chargé depuis d’autres sites.",
        "Effacé veut dire effacé\u{A0}: lorsqu’un sondage est supprimé ou atteint sa date d’effacement, ses données sont écrasées dans la base, pas seulement masquées.",
    ],
    privacy_browser_heading: "Dans votre navigateur",
    privacy_browser: "Après votre réponse à un sondage, votre navigateur le note dans son stockage local, afin que la page du sondage puisse vous rappeler que vous avez déjà répondu. Cette note reste sur votre appareil et ne nous est jamais transmise. Elle est supprimée après la date d’effacement du sondage\u{202F}; vous pouvez aussi l’effacer à tout moment en supprimant les données de ce site dans votre navigateur. Le lien d’administration porte sa clé après le signe #, une partie de l’adresse que les navigateurs n’envoient jamais à un serveur.",
};
