//! Media over real HTTP: uploads on the creation form and the admin page,
//! metadata stripped before anything is stored or served, `/media/{id}` with
//! its headers and byte ranges, clear errors in the reader's language with
//! everything typed kept, and erasure with the poll (database files scanned
//! for what was uploaded).

use crate::common;

use common::media::*;
use common::*;
use serde_json::Value;

fn post_multipart(server: &Server, path: &str, texts: &[(&str, &str)], files: &[File]) -> Response {
    server
        .request("POST", path)
        .xff(&Server::fresh_client_ip())
        .header("Content-Type", &multipart_type())
        .body(multipart(texts, files))
        .send()
}

/// The poll's media list from the API.
fn api_media(server: &Server, id: &str) -> Vec<Value> {
    server.get(&format!("/api/polls/{id}")).json()["media"].as_array().cloned().unwrap_or_default()
}

/// Creates a poll through the form with a picture for the poll and one for
/// its first question. Returns (poll id, admin token).
fn create_with_pictures(server: &Server, marker: &str) -> (String, String) {
    let jpeg = jpeg_with_exif(marker);
    let png = png_with_text(marker, b"");
    let code = once(server);
    let alt_poll = format!("Poll picture alt {marker}");
    let resp = post_multipart(
        server,
        "/",
        &[
            ("once", &code),
            ("title", "Which picture?"),
            ("lang", "en"),
            ("expiry", "7"),
            ("results", "public"),
            ("q0", "Pick one"),
            ("q0o0", "Left"),
            ("q0o1", "Right"),
            ("pm-alt", &alt_poll),
            ("q0m-alt", "A gradient"),
        ],
        &[
            File("pm", "IMG_2024_holiday_Jane_Doe.jpg", "image/jpeg", &jpeg),
            File("q0m", "gradient.png", "application/octet-stream", &png),
        ],
    );
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let poll = Created::from_page(&resp.text());
    (poll.id, poll.token)
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn pictures_from_the_creation_form_are_stored_clean_and_served_safely() {
    let server = Server::start();
    let marker = unique_marker("exif");
    let (id, _token) = create_with_pictures(&server, &marker);

    let media = api_media(&server, &id);
    assert_eq!(media.len(), 2, "{media:?}");
    assert_eq!(media[0]["question"], Value::Null);
    assert_eq!(media[0]["kind"], "image");
    assert_eq!(media[0]["mimeType"], "image/jpeg");
    assert_eq!(media[0]["alt"], format!("Poll picture alt {marker}"));
    assert_eq!((media[0]["width"].as_u64(), media[0]["height"].as_u64()), (Some(64), Some(48)));
    assert_eq!(media[1]["question"], 0);
    assert_eq!(media[1]["mimeType"], "image/png", "the type comes from the content, not the client");

    for m in &media {
        let url = m["url"].as_str().unwrap();
        let path = url.strip_prefix(&server.base_url).expect("absolute URL on this server");
        let resp = server.get(path);
        resp.assert_status(200);
        assert_eq!(resp.header("content-type"), m["mimeType"].as_str());
        assert_eq!(resp.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(resp.header("content-security-policy"), Some("sandbox; default-src 'none'"));
        assert_eq!(resp.header("cross-origin-resource-policy"), Some("same-origin"));
        assert_eq!(resp.header("accept-ranges"), Some("bytes"));
        assert_eq!(resp.header_all("cache-control").len(), 1, "{}", resp.describe());
        // Kept by the browser, but asked about before each use: an erased
        // or replaced file is never shown from a cache.
        assert_eq!(resp.header("cache-control"), Some("private, no-cache"));
        assert_eq!(resp.header("etag"), Some(format!("\"{}\"", hex(&sha256(&resp.body))).as_str()));
        assert_eq!(resp.body.len() as u64, m["bytes"].as_u64().unwrap());
        resp.assert_no_cookie();
        for needle in [marker.as_bytes(), b"Exif", b"GPS", b"47.3769", b"Canon", b"tEXt", b"Jane_Doe"] {
            assert!(
                !contains_bytes(&resp.body, needle),
                "served {url} still holds {:?}",
                String::from_utf8_lossy(needle)
            );
        }
        let decoded = image::load_from_memory(&resp.body).expect("the served picture decodes");
        assert!(decoded.width() > 0);
    }
    // Stored clean too: the marker is only in the alt text the person typed.
    for needle in [&b"Exif\x00\x00"[..], b"GPSLatitude", b"comment ZQX", b"Jane_Doe", b"holiday"] {
        assert_not_in_db(server.dir(), needle, "a picture's metadata");
    }

    // The pages show them with their text alternative.
    let share = server.get(&format!("/p/{id}")).text();
    let src = media[0]["url"].as_str().unwrap().strip_prefix(&server.base_url).unwrap().to_owned();
    assert!(
        share.contains(&format!("<img src=\"{src}\" alt=\"Poll picture alt {marker}\" width=\"64\" height=\"48\"")),
        "{share}"
    );
    assert!(share.contains("alt=\"A gradient\""), "the question's picture");
    let results = server.get(&format!("/p/{id}/results")).text();
    assert!(results.contains(&src), "{results}");
    let csp = server.get(&format!("/p/{id}")).header("content-security-policy").unwrap().to_owned();
    assert!(csp.contains("img-src 'self'") && csp.contains("media-src 'self'"), "{csp}");
}

#[test]
fn media_are_served_in_ranges_and_revalidated_by_hash() {
    let server = Server::start();
    let (id, _) = create_with_pictures(&server, &unique_marker("range"));
    let media = api_media(&server, &id);
    let path = format!("/media/{}", media[0]["id"].as_str().unwrap());
    let full = server.get(&path);
    let size = full.body.len();
    assert!(size > 100);

    let part = server.request("GET", &path).header("Range", "bytes=10-19").send();
    part.assert_status(206);
    assert_eq!(part.header("content-range"), Some(format!("bytes 10-19/{size}").as_str()));
    assert_eq!(part.body, full.body[10..20]);
    let tail = server.request("GET", &path).header("Range", "bytes=-7").send();
    tail.assert_status(206);
    assert_eq!(tail.body, full.body[size - 7..]);
    let open = server.request("GET", &path).header("Range", "bytes=5-").send();
    open.assert_status(206);
    assert_eq!(open.body, full.body[5..]);
    let beyond = server.request("GET", &path).header("Range", &format!("bytes={size}-")).send();
    beyond.assert_status(416);
    assert_eq!(beyond.header("content-range"), Some(format!("bytes */{size}").as_str()));
    // Several ranges, or a stale If-Range: the whole file.
    let multi = server.request("GET", &path).header("Range", "bytes=0-1,4-5").send();
    multi.assert_status(200);
    let stale = server.request("GET", &path).header("Range", "bytes=0-1").header("If-Range", "\"0000\"").send();
    assert_eq!((stale.status, stale.body.len()), (200, size));

    assert_eq!(
        server.request("GET", &path).header("Range", "Bytes=0-1").send().status,
        206,
        "units are case-insensitive"
    );
    let etag = full.header("etag").unwrap().to_owned();
    let again = server.request("GET", &path).header("If-None-Match", &etag).send();
    again.assert_status(304);
    assert!(again.body.is_empty());
    let head = server.request("HEAD", &path).send();
    head.assert_status(200);
    assert_eq!(head.header("content-length"), Some(size.to_string().as_str()));

    for missing in ["/media/AAAAAAAAAAAAAAAA", "/media/short", "/media/..%2f..%2fetc"] {
        assert_eq!(server.get(missing).status, 404, "{missing}");
    }
    let post = server.request("POST", &path).body(Vec::new()).send();
    assert_eq!(post.status, 405);
}

#[test]
fn bad_uploads_are_refused_in_the_readers_language_and_keep_what_was_typed() {
    let server = Server::start();
    let marker = unique_marker("bad");
    let title = format!("Kept title {marker}");
    let send = |extra: &[(&str, &str)], files: &[File]| {
        let code = once(&server);
        let mut pairs: Vec<(&str, &str)> = vec![
            ("once", &code),
            ("title", &title),
            ("lang", "fr"),
            ("expiry", "30"),
            ("q0", "Question gardée"),
            ("q0o0", "Oui"),
            ("q0o1", "Non"),
        ];
        pairs.extend_from_slice(extra);
        post_multipart(&server, "/?lang=fr", &pairs, files)
    };

    // A web page dressed as a picture.
    let html = format!("<html><script>alert('{marker}')</script></html>");
    let resp = send(&[("pm-alt", "x")], &[File("pm", "photo.png", "image/png", html.as_bytes())]);
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let page = resp.text();
    assert!(page.contains("Ce type de fichier n’est pas accepté."), "{page}");
    assert!(page.contains(&format!("value=\"Kept title {marker}\"")), "the title is kept");
    assert!(page.contains("value=\"Question gardée\""));
    assert!(page.contains("href=\"#f-pm\""), "the summary points at the file field");

    // A truncated picture.
    let jpeg = jpeg_with_exif(&marker);
    let resp = send(&[("pm-alt", "x")], &[File("pm", "a.jpg", "image/jpeg", &jpeg[..jpeg.len() / 2])]);
    assert_eq!(resp.status, 422, "{}", resp.describe());
    assert!(resp.text().contains("Ce fichier est endommagé ou incomplet"), "{}", resp.text());

    // A good picture without its alt text: refused, but held, so the person
    // only has to type the description.
    let png = png_with_text(&marker, format!("<html>{marker}</html>").as_bytes());
    let resp = send(&[], &[File("q0m", "x.png", "image/png", &png)]);
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let page = resp.text();
    assert!(page.contains("Décrivez l’image pour les personnes qui ne la voient pas."), "{page}");
    assert!(page.contains("Fichier conservé"), "{page}");
    let held = input_value(&page, "name=\"q0m-held\"");
    assert!(!held.is_empty());

    // Sent again with the description and the held reference only.
    let resp = send(&[("q0m-held", &held), ("q0m-alt", "Un dégradé")], &[]);
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let id = Created::from_page(&resp.text()).id;
    let media = api_media(&server, &id);
    assert_eq!(media.len(), 1);
    assert_eq!(media[0]["question"], 0);
    assert_eq!(media[0]["alt"], "Un dégradé");
    let served = server.get(&format!("/media/{}", media[0]["id"].as_str().unwrap()));
    assert!(!contains_bytes(&served.body, b"<html>"), "the polyglot's tail is gone");
    assert!(!contains_bytes(&served.body, marker.as_bytes()));

    // A used reference is forgotten: it cannot attach the file again.
    let resp = send(&[("q0m-held", &held), ("q0m-alt", "encore")], &[]);
    assert_eq!(resp.status, 422, "{}", resp.describe());
    assert!(resp.text().contains("n’est plus conservé par le serveur"), "{}", resp.text());

    // Structural buttons keep a held file too.
    let resp = send(&[("action", "add-question")], &[File("pm", "p.png", "image/png", &png)]);
    assert_eq!(resp.status, 200, "{}", resp.describe());
    let held = input_value(&resp.text(), "name=\"pm-held\"");
    assert!(!held.is_empty());
    // "Remove this file" forgets it at once, not an hour later.
    let resp = send(&[("action", "media-drop-pm"), ("pm-held", &held)], &[]);
    assert_eq!(resp.status, 200, "{}", resp.describe());
    assert!(!resp.text().contains("name=\"pm-held\""));
    let resp = send(&[("action", "add-question"), ("pm-held", &held)], &[]);
    assert!(resp.text().contains("n’est plus conservé par le serveur"), "{}", resp.text());
}

#[test]
fn size_limits_are_enforced_per_kind_and_per_form() {
    let server = Server::builder()
        .arg("--image-max-mib")
        .arg("1")
        .arg("--audio-max-mib")
        .arg("2")
        .arg("--video-max-mib")
        .arg("3")
        .arg("--upload-max-mib")
        .arg("3")
        .start();
    let mut big = png_with_text("big", b"");
    big.resize(1024 * 1024 + 10, 0);
    let code = once(&server);
    let resp = post_multipart(
        &server,
        "/?lang=de",
        &[("once", &code), ("title", "Groß"), ("q0", "F"), ("q0o0", "a"), ("q0o1", "b"), ("pm-alt", "x")],
        &[File("pm", "big.png", "image/png", &big)],
    );
    assert_eq!(resp.status, 422, "{}", resp.describe());
    assert!(resp.text().contains("ist zu groß: höchstens 1 MB."), "{}", resp.text());
    assert!(resp.text().contains("value=\"Groß\""));

    // A form body over the upload limit is not read at all.
    let huge = vec![b'x'; 4 * 1024 * 1024];
    let resp = post_multipart(&server, "/", &[("title", "t")], &[File("pm", "h.png", "image/png", &huge)]);
    assert_eq!(resp.status, 413, "{}", resp.describe());

    // The larger limit is only for multipart bodies of the upload forms.
    let id = server.create_public().id;
    let resp =
        post_multipart(&server, &format!("/p/{id}"), &[("q0", "0")], &[File("x", "x", "x", &vec![b'y'; 300 * 1024])]);
    assert_eq!(resp.status, 413, "{}", resp.describe());
    let resp = server
        .request("POST", "/api/polls")
        .header("Content-Type", &multipart_type())
        .body(multipart(&[("title", "t")], &[File("pm", "a.png", "image/png", &png_with_text("api", b""))]))
        .send();
    assert_eq!(resp.status, 415, "the API takes no media: {}", resp.describe());

    // A form limit below a file limit could never carry such a file: refused at start.
    let out = output_of_refusal(
        std::process::Command::new(env!("CARGO_BIN_EXE_polld"))
            .args(["--listen", "127.0.0.1:0", "--db"])
            .arg(server.dir().join("other.sqlite3"))
            .args(["--video-max-mib", "80", "--upload-max-mib", "64"]),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--upload-max-mib (64) must be at least"), "{out:?}");
}

#[test]
fn the_admin_page_attaches_replaces_and_removes_media_and_erases_the_old() {
    let server = Server::start();
    let marker = unique_marker("admin");
    let (id, token) = create_with_pictures(&server, &marker);
    let admin = format!("/p/{id}/admin?lang=en");
    let before = api_media(&server, &id);
    let old = before.iter().find(|m| m["question"] == 0).unwrap().clone();
    let old_bytes = server.get(&format!("/media/{}", old["id"].as_str().unwrap())).body;

    // Without the key nothing happens. (A picture unlike the old one: the
    // old one's bytes must vanish, not be found again in the new one.)
    let mut png = Vec::new();
    image::RgbImage::from_fn(50, 20, |x, _| image::Rgb([200, (x * 5) as u8, 10]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let resp = post_multipart(
        &server,
        &admin,
        &[("token", "wrong"), ("action", "media-attach"), ("slot", "q0"), ("am-alt", "x")],
        &[File("am", "n.png", "image/png", &png)],
    );
    assert_eq!(resp.status, 403, "{}", resp.describe());

    // Replace the first question's picture.
    let new_alt = format!("Replacement {marker}");
    let resp = post_multipart(
        &server,
        &admin,
        &[("token", &token), ("action", "media-attach"), ("slot", "q0"), ("am-alt", &new_alt)],
        &[File("am", "n.png", "image/png", &png)],
    );
    // Done: the admin page again, by a GET that says so (tests/web/admin.rs).
    assert_eq!(resp.status, 303, "{}", resp.describe());
    let done = server.get(resp.header("location").unwrap());
    assert!(done.text().contains("The file was attached."), "{}", done.text());
    let after = api_media(&server, &id);
    assert_eq!(after.len(), 2);
    let new = after.iter().find(|m| m["question"] == 0).unwrap();
    assert_eq!(new["alt"], new_alt.as_str());
    assert_eq!(server.get(&format!("/media/{}", old["id"].as_str().unwrap())).status, 404, "the old file is gone");
    let window = &old_bytes[old_bytes.len() / 2..old_bytes.len() / 2 + 48];
    assert_not_in_db(server.dir(), window, "the replaced file's bytes");

    // An invalid attach keeps the chosen slot and reports in place.
    let resp = post_multipart(
        &server,
        &admin,
        &[("token", &token), ("action", "media-attach"), ("slot", "q0")],
        &[File("am", "n.png", "image/png", &png)],
    );
    assert_eq!(resp.status, 422, "{}", resp.describe());
    assert!(resp.text().contains("Describe the picture for people who cannot see it."));
    assert!(resp.text().contains("<option value=\"q0\" selected>"), "{}", resp.text());
    // The held picture's card shows its thumbnail there too, served while held.
    let held = input_value(&resp.text(), "name=\"am-held\"");
    assert!(
        resp.text().contains(&format!("<img class=\"held-thumb\" src=\"/held/{held}\" alt=\"\"")),
        "{}",
        resp.text()
    );
    let thumb = server.get(&format!("/held/{held}"));
    assert_eq!((thumb.status, thumb.header("content-type")), (200, Some("image/png")), "{}", thumb.describe());

    // Remove the poll's own picture.
    let own = after.iter().find(|m| m["question"].is_null()).unwrap();
    let own_bytes = server.get(&format!("/media/{}", own["id"].as_str().unwrap())).body;
    let resp = post_multipart(
        &server,
        &admin,
        &[("token", &token), ("action", "media-remove"), ("media", own["id"].as_str().unwrap())],
        &[],
    );
    assert_eq!(resp.status, 303, "{}", resp.describe());
    assert!(server.get(resp.header("location").unwrap()).text().contains("The file was removed and erased."));
    assert_eq!(api_media(&server, &id).len(), 1);
    assert_not_in_db(
        server.dir(),
        &own_bytes[own_bytes.len() / 2..own_bytes.len() / 2 + 48],
        "the removed file's bytes",
    );
    assert_not_in_db(server.dir(), format!("Poll picture alt {marker}").as_bytes(), "the removed file's alt text");
}

#[test]
fn a_deleted_or_expired_poll_takes_its_media_with_it() {
    let server = Server::start();
    let mut served = Vec::new();
    let mut polls = Vec::new();
    for tag in ["del", "exp"] {
        let marker = unique_marker(tag);
        let (id, token) = create_with_pictures(&server, &marker);
        let media = api_media(&server, &id);
        let bodies: Vec<Vec<u8>> =
            media.iter().map(|m| server.get(&format!("/media/{}", m["id"].as_str().unwrap())).body).collect();
        // Stored sealed: the files' bytes are in no database file, their
        // sealed bytes are.
        for b in &bodies {
            assert_not_in_db(server.dir(), &b[b.len() / 2..b.len() / 2 + 48], "a stored file, unsealed");
        }
        let sealed: Vec<Vec<u8>> = media
            .iter()
            .map(|m| {
                db_blob(server.dir(), "SELECT bytes FROM sealed_media WHERE id = ?1", &[m["id"].as_str().unwrap()])
            })
            .collect();
        for s in &sealed {
            assert_in_db(server.dir(), &s[s.len() / 2..s.len() / 2 + 48], "a stored file's sealed bytes (sanity)");
        }
        let gone = if erasure_overwrites_sealed_bytes() { [bodies, sealed].concat() } else { bodies };
        served.push((marker, media, gone));
        polls.push((id, token));
    }
    // Deleted through the API.
    assert_eq!(server.delete(&polls[0].0, &polls[0].1).status, 204);
    // Expired: the sweep as cron would run it, on the day after the expiry.
    server.sweep_as_of(&date_from_today(8));
    for (marker, media, bodies) in &served {
        for m in media {
            assert_eq!(server.get(&format!("/media/{}", m["id"].as_str().unwrap())).status, 404);
        }
        for b in bodies {
            assert_not_in_db(server.dir(), &b[b.len() / 2..b.len() / 2 + 48], "an erased poll's file");
        }
        assert_not_in_db(server.dir(), marker.as_bytes(), "an erased poll's alt text");
    }
    // Nothing else beside the database (and the test's folder of its key
    // file, or on PostgreSQL the file naming its database) either.
    let keys_folder = std::path::Path::new(KEYS_NAME).parent().unwrap().to_string_lossy().into_owned();
    for entry in std::fs::read_dir(server.dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let known = name.starts_with(DB_NAME) || name == keys_folder || (on_postgres() && name == PG_URL_FILE);
        assert!(known, "unexpected file {name} in the data directory");
    }
    let keys: Vec<_> = std::fs::read_dir(server.dir().join(&keys_folder)).unwrap().collect();
    assert_eq!(keys.len(), 1, "the key file alone in its folder");
}

/// Every accepted format, as real files made by ffmpeg and exiftool with GPS,
/// camera and tag metadata (tests/fixtures/media/README.md), through the
/// creation form: what is served and what is stored holds none of it.
#[test]
fn every_kind_of_media_is_served_and_stored_without_its_metadata() {
    const FIXTURES: [(&str, &str, &str); 10] = [
        ("photo.jpg", "image", "image/jpeg"),
        ("image.png", "image", "image/png"),
        ("image.webp", "image", "image/webp"),
        ("anim.gif", "image", "image/gif"),
        ("sound.mp3", "audio", "audio/mpeg"),
        ("voice.opus", "audio", "audio/ogg"),
        ("sound.ogg", "audio", "audio/ogg"),
        ("sound.m4a", "audio", "audio/mp4"),
        ("clip.mp4", "video", "video/mp4"),
        ("clip.webm", "video", "video/webm"),
    ];
    const NEEDLES: [&[u8]; 8] = [
        b"ANONPOLL-SECRET-MARKER",
        b"AnonCamMake",
        b"AnonCamModel",
        b"47.3769",
        b"8.5417",
        b"Exif\x00\x00",
        b"http://ns.adobe.com/",
        b"ID3\x03",
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media");
    let files: Vec<Vec<u8>> = FIXTURES.iter().map(|(name, ..)| std::fs::read(dir.join(name)).unwrap()).collect();
    for ((name, ..), bytes) in FIXTURES.iter().zip(&files) {
        assert!(NEEDLES.iter().any(|n| contains_bytes(bytes, n)), "{name} carries no metadata to strip (sanity)");
    }

    let server = Server::start();
    let code = once(&server);
    // The first file goes with the poll, each other one with a question.
    let mut texts: Vec<(String, String)> = vec![
        ("once".into(), code),
        ("title".into(), "Every format".into()),
        ("lang".into(), "en".into()),
        ("expiry".into(), "7".into()),
        ("results".into(), "public".into()),
        ("pm-alt".into(), "The poll's picture".into()),
    ];
    let mut parts = vec![File("pm", "a", "application/octet-stream", &files[0])];
    let names: Vec<String> = (0..FIXTURES.len() - 1).map(|i| format!("q{i}m")).collect();
    for (i, name) in names.iter().enumerate() {
        texts.push((format!("q{i}"), format!("Question {i}")));
        texts.push((format!("q{i}o0"), "yes".into()));
        texts.push((format!("q{i}o1"), "no".into()));
        texts.push((format!("{name}-alt"), format!("Media {i}")));
        parts.push(File(name, "b", "application/octet-stream", &files[i + 1]));
    }
    let pairs: Vec<(&str, &str)> = texts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let resp = post_multipart(&server, "/", &pairs, &parts);
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let id = Created::from_page(&resp.text()).id;

    let media = api_media(&server, &id);
    assert_eq!(media.len(), FIXTURES.len(), "{media:?}");
    for (m, (name, kind, mime)) in media.iter().zip(FIXTURES) {
        assert_eq!((m["kind"].as_str(), m["mimeType"].as_str()), (Some(kind), Some(mime)), "{name}: {m}");
        let served = server.get(&format!("/media/{}", m["id"].as_str().unwrap()));
        served.assert_status(200);
        assert_eq!(served.header("content-type"), Some(mime), "{name}");
        for needle in NEEDLES {
            assert!(
                !contains_bytes(&served.body, needle),
                "served {name} still holds {:?}",
                String::from_utf8_lossy(needle)
            );
        }
    }
    // The photo is stored upright (its EXIF orientation applied, then dropped).
    assert_eq!((media[0]["width"].as_u64(), media[0]["height"].as_u64()), (Some(48), Some(64)), "{}", media[0]);
    for needle in NEEDLES {
        assert_not_in_db(server.dir(), needle, "upload metadata");
    }
    // The share page offers each with the right element.
    let page = server.get(&format!("/p/{id}")).text();
    assert_eq!(page.matches("<img ").count(), 4, "{page}");
    assert_eq!(page.matches("<audio controls").count(), 4, "{page}");
    assert_eq!(page.matches("<video controls").count(), 2, "{page}");
}

/// Only a few uploads' files are read at once (16, one per client); more are
/// answered 503 as their file begins, and everything else is served.
#[test]
fn uploads_in_progress_are_capped_and_the_rest_is_still_served() {
    use std::io::Write;
    let server = Server::start();
    let (poll, _) = create_with_pictures(&server, &unique_marker("busy"));
    let media = format!("/media/{}", api_media(&server, &poll)[0]["id"].as_str().unwrap());
    // Sixteen slow uploads, from sixteen clients (one may hold only one
    // upload slot): a head announcing a large body and a file part begun
    // (a slot is taken only then), then nothing.
    let open_slow = || {
        let mut s = std::net::TcpStream::connect(&server.addr).unwrap();
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {}\r\nContent-Type: {}\r\nContent-Length: 10000000\r\n\r\n--{BOUNDARY}\r\n\
             Content-Disposition: form-data; name=\"pm\"; filename=\"a.png\"\r\n\r\n\x01",
            Server::fresh_client_ip(),
            multipart_type()
        )
        .unwrap();
        s.set_nonblocking(true).unwrap();
        s
    };
    // Whether the server has answered (or closed) a slow upload already.
    let answered = |s: &std::net::TcpStream| {
        let mut byte = [0u8; 1];
        !matches!(s.peek(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    };
    let mut slow: Vec<std::net::TcpStream> = (0..16).map(|_| open_slow()).collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let busy = loop {
        // A probe that slipped in before a slow head was read took its slot,
        // and that slow upload was refused: send it again.
        for s in &mut slow {
            if answered(s) {
                *s = open_slow();
            }
        }
        let resp = post_multipart(&server, "/", &[("title", "t")], &[File("pm", "a.png", "image/png", b"x")]);
        if resp.status == 503 || std::time::Instant::now() > deadline {
            break resp;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(busy.status, 503, "{}", busy.describe());
    assert_eq!(busy.header("retry-after"), Some("5"));
    // Pages, the API and media keep being served meanwhile.
    server.get("/").assert_status(200);
    server.get("/api").assert_status(200);
    server.get(&media).assert_status(200);
    // Once the slow ones give up, uploads are taken again.
    drop(slow);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let code = once(&server);
        let resp = post_multipart(
            &server,
            "/",
            &minimal_form(&code, "After", "p"),
            &[File("pm", "p.png", "image/png", &png_with_text("after", b""))],
        );
        if resp.status == 201 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "uploads never recovered: {}", resp.describe());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// However much a client asks for, one answer carries at most 4 MiB of a
/// file; a form body admitted by a second `Content-Type` gets no upload limit.
#[test]
fn ranges_are_answered_in_bounded_chunks_and_only_multipart_gets_the_upload_limit() {
    const CHUNK: usize = 4 * 1024 * 1024;
    let server = Server::start();
    let (_, path) = big_noise_picture(&server, (1300, 1100));
    let full = server.get(&path);
    assert!(full.body.len() > CHUNK + 1000, "{}", full.body.len());
    for range in ["bytes=0-", "bytes=0-99999999", "bytes=100-"] {
        let part = server.request("GET", &path).header("Range", range).send();
        part.assert_status(206);
        assert_eq!(part.body.len(), CHUNK, "{range}");
        let start: usize = if range == "bytes=100-" { 100 } else { 0 };
        assert_eq!(
            part.header("content-range"),
            Some(format!("bytes {start}-{}/{}", start + CHUNK - 1, full.body.len()).as_str())
        );
        assert_eq!(part.body, full.body[start..start + CHUNK]);
    }
    let rest = server.request("GET", &path).header("Range", &format!("bytes={CHUNK}-")).send();
    assert_eq!(rest.body, full.body[CHUNK..], "the client asks again for the rest");

    // Two Content-Types, urlencoded first: not an upload, so 256 KiB at most.
    let pairs = "a&".repeat(150 * 1024).into_bytes();
    let resp = server
        .request("POST", "/")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Content-Type", &multipart_type())
        .body(pairs)
        .send();
    assert_eq!(resp.status, 413, "{}", resp.describe());
}

/// One client cannot fill the memory that holds files for forms in progress.
#[test]
fn one_client_holds_at_most_its_share_of_files_in_progress() {
    // 1 MiB in all: 256 KiB for one client.
    let server = Server::builder().arg("--upload-hold-mib").arg("1").start();
    let (a, b, c) = (noise_png(200, 200), noise_png(201, 200), noise_png(202, 200));
    let resp = post_multipart(
        &server,
        "/?lang=de",
        &[
            ("title", "Quote"),
            ("q0", "F"),
            ("q0o0", "a"),
            ("q0o1", "b"),
            ("q1", "G"),
            ("q1o0", "a"),
            ("q1o1", "b"),
            ("action", "add-question"),
        ],
        &[
            File("pm", "a.png", "image/png", &a),
            File("q0m", "b.png", "image/png", &b),
            File("q1m", "c.png", "image/png", &c),
        ],
    );
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let page = resp.text();
    assert!(page.contains("Sie haben zu viele Dateien in noch nicht abgeschickten Formularen."), "{page}");
    assert!(page.contains("name=\"pm-held\"") && page.contains("name=\"q0m-held\""), "the first two are held");
    assert!(!page.contains("name=\"q1m-held\""), "the third is not");
}

/// Uploads are tied to their client only in memory (the held files' share
/// per client): the uploader's address reaches no database file and no log.
#[test]
fn an_uploaders_address_is_neither_stored_nor_logged() {
    const ADDR: &str = "203.0.113.199";
    let server = Server::start();
    let send = |texts: &[(&str, &str)], files: &[File]| {
        server
            .request("POST", "/")
            .xff(ADDR)
            .header("Content-Type", &multipart_type())
            .body(multipart(texts, files))
            .send()
    };
    let png = png_with_text("addr", b"");
    // Held (alt text missing), then sent again with its reference: created.
    let resp =
        send(&[("title", "T"), ("q0", "Q"), ("q0o0", "a"), ("q0o1", "b")], &[File("pm", "p.png", "image/png", &png)]);
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let held = input_value(&resp.text(), "name=\"pm-held\"");
    let code = once(&server);
    let mut form = minimal_form(&code, "Address", "alt");
    form.push(("pm-held", &held));
    let resp = send(&form, &[]);
    assert_eq!(resp.status, 201, "{}", resp.describe());
    // A refused upload too, so the error path is covered.
    send(&[("title", "T")], &[File("pm", "x.png", "image/png", b"<html></html>")]);
    for needle in [ADDR.as_bytes(), &[203, 0, 113, 199][..], b"cb0071c7"] {
        assert_not_in_db(server.dir(), needle, "the uploader's address");
        assert!(!contains_bytes(&server.log_bytes(), needle), "the uploader's address is in polld's output");
    }
}

/// A kept picture's thumbnail on the creation form: `/held/{reference}`
/// serves its cleaned bytes while the form holds it, with the headers of
/// `/media/` but never stored; a held sound, an unknown or malformed
/// reference, or one whose poll was created: a bare 404. The reference is
/// never written to polld's output.
#[test]
fn a_held_picture_is_served_for_its_thumbnail_only_while_held() {
    let server = Server::start();
    let marker = unique_marker("thumb");
    let png = png_with_text(&marker, format!("<html>{marker}</html>").as_bytes());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media");
    let sound = std::fs::read(dir.join("voice.opus")).unwrap();
    // The picture's alt text is missing: refused, both files held.
    let form = |extra: &[(&str, &str)]| {
        let mut pairs =
            vec![("title", "Thumbnails"), ("lang", "en"), ("expiry", "7"), ("q0", "Q"), ("q0o0", "a"), ("q0o1", "b")];
        pairs.extend_from_slice(extra);
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect::<Vec<_>>()
    };
    let send = |pairs: &[(String, String)], files: &[File]| {
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        post_multipart(&server, "/", &pairs, files)
    };
    let resp = send(&form(&[]), &[File("pm", "p.png", "image/png", &png), File("q0m", "v.opus", "audio/ogg", &sound)]);
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let page = resp.text();
    let picture = input_value(&page, "name=\"pm-held\"");
    let voice = input_value(&page, "name=\"q0m-held\"");
    assert!(picture.len() >= 22 && voice.len() >= 22, "128-bit references ({picture}, {voice})");

    // The card shows the picture, decoratively; the sound keeps its glyph.
    let thumb = format!("<img class=\"held-thumb\" src=\"/held/{picture}\" alt=\"\"");
    assert!(page.contains(&thumb), "the kept picture's thumbnail: {page}");
    assert!(!page.contains(&format!("/held/{voice}")), "no thumbnail for a sound");

    let served = server.get(&format!("/held/{picture}"));
    assert_eq!(served.status, 200, "{}", served.describe());
    assert_eq!(served.header("content-type"), Some("image/png"));
    assert_eq!(served.header("cache-control"), Some("no-store"));
    assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(served.header("cross-origin-resource-policy"), Some("same-origin"));
    assert!(served.header("content-security-policy").is_some_and(|c| c.starts_with("sandbox")));
    assert!(served.body.starts_with(b"\x89PNG"), "a PNG");
    assert!(!contains_bytes(&served.body, marker.as_bytes()), "the cleaned bytes, not the upload");
    assert!(!contains_bytes(&served.body, b"<html>"), "the polyglot's tail is gone");
    served.assert_no_cookie();
    let head = server.request("HEAD", &format!("/held/{picture}")).send();
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    let post = server.request("POST", &format!("/held/{picture}")).send();
    assert_eq!(post.status, 405);

    // Nothing else is served: a held sound, unknown and malformed references.
    let unknown = "A".repeat(22);
    let malformed = [
        format!("/held/{voice}"),
        format!("/held/{unknown}"),
        "/held/".into(),
        "/held/x".into(),
        format!("/held/{picture}x"),
        format!("/held/{}", &picture[..21]),
        format!("/held/{picture}/"),
        format!("/held/{picture}/x"),
        format!("/held/..%2F{picture}"),
    ];
    for path in &malformed {
        let r = server.get(path);
        assert_eq!(r.status, 404, "{path}: {}", r.describe());
        assert_eq!(r.media_type().as_deref(), Some("text/plain"), "{path}");
        assert!(!contains_bytes(&r.body, b"\x89PNG") && !contains_bytes(&r.body, b"OggS"), "{path}");
    }

    // Created with both: the references are forgotten, and so is the thumbnail.
    let code = once(&server);
    let resp =
        send(&form(&[("once", &code), ("pm-held", &picture), ("pm-alt", "A picture"), ("q0m-held", &voice)]), &[]);
    assert_eq!(resp.status, 201, "{}", resp.describe());
    assert_eq!(server.get(&format!("/held/{picture}")).status, 404, "gone once the poll is created");
    assert!(!contains_bytes(&server.log_bytes(), picture.as_bytes()), "the reference is in polld's output");
}

/// Questions added or removed (no response yet): a question's file never
/// shows beside another question. Its place no longer names its question,
/// so every question's file goes with the change; the poll's own stays.
#[test]
fn a_change_of_questions_takes_their_files_and_never_moves_one() {
    let server = Server::start();
    let (id, token) = create_with_pictures(&server, &unique_marker("moved"));
    let before = api_media(&server, &id);
    let question_file = before.iter().find(|m| m["question"] == 0).unwrap()["id"].as_str().unwrap().to_owned();
    // A question put before the one with the picture.
    let body = serde_json::json!({"questions": [
        {"label": "New first", "options": ["a", "b"]},
        {"label": "Pick one", "options": ["Left", "Right"]}
    ]});
    server.patch_json(&id, &token, &body).assert_status(200);
    let after = api_media(&server, &id);
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(after[0]["question"].is_null(), "only the poll's own file stays: {after:?}");
    assert_eq!(server.get(&format!("/media/{question_file}")).status, 404, "the question's file is erased");
}
