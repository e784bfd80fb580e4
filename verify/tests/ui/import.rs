//! Import (planned, then imported as planned) and a large plan's weight.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;
use toggle_admin::ui::CONTENT_SECURITY_POLICY;

use super::support::{Page, setup};

/// The value of the hidden `plan` field: the fingerprint of the plan shown.
fn fingerprint(page: &Page) -> Option<String> {
    let at = page.body.find("name=\"plan\" value=\"")?;
    let rest = &page.body[at + "name=\"plan\" value=\"".len()..];
    Some(rest[..rest.find('"')?].to_owned())
}

#[tokio::test]
async fn an_export_is_planned_then_imported_as_planned() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let token = t.get("/admin/import", Some(&cookie)).await.csrf();
    let document = json!({
        "features": [
            { "name": "imported", "project": "whatever", "type": "release", "description": "<b>new</b>" },
            { "name": "checkout", "type": "release", "description": "Pay <i>now</i>" }
        ],
        "featureStrategies": [],
        "featureEnvironments": [{ "name": "imported", "featureName": "imported", "environment": "dev", "enabled": true, "variants": [] }],
        "featureTags": [], "tagTypes": [], "contextFields": [], "segments": [], "dependencies": []
    })
    .to_string();
    let multipart = |fields: &[(&str, &str)]| {
        let boundary = "XyZ";
        let mut body = String::new();
        for (name, value) in [
            ("csrf", token.as_str()),
            ("project", "shop"),
            ("environment", "production"),
        ]
        .iter()
        .chain(fields)
        {
            body.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            ));
        }
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--{boundary}--\r\n"
        ));
        Request::builder()
            .method(Method::POST)
            .uri("/admin/import")
            .header(header::HOST, "localhost")
            .header(header::COOKIE, &cookie)
            .header(
                header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(Body::from(body))
            .unwrap()
    };
    let events = t.admin.events(&t.caller, 0, 1000).await.unwrap().len();
    // Plan: what will be created and changed, with the old and new values; nothing written.
    let page = t
        .send(multipart(&[("document", &document), ("action", "plan")]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("The document is valid"), "{}", page.body);
    assert!(
        page.body.contains("1 to create, 1 to update, 0 unchanged"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("<code>/description</code>"),
        "{}",
        page.body
    );
    // Old and new values, escaped.
    assert!(
        page.body
            .contains("&lt;script&gt;alert('x')&lt;/script&gt;"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Pay &lt;i&gt;now&lt;/i&gt;"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("&lt;b&gt;new&lt;/b&gt;"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<b>new") && !page.body.contains("<script>alert"));
    assert!(!page.body.contains("style="));
    assert_eq!(
        page.header(header::CONTENT_SECURITY_POLICY),
        CONTENT_SECURITY_POLICY
    );
    let planned = fingerprint(&page).expect("the plan's fingerprint in the form");
    assert!(
        t.admin
            .feature(&t.caller, "shop", "imported")
            .await
            .is_err(),
        "planning writes nothing"
    );
    // Import without having seen the plan: the plan is shown, nothing is written.
    let page = t
        .send(multipart(&[("document", &document), ("action", "import")]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains("Nothing was written yet"),
        "{}",
        page.body
    );
    assert_eq!(fingerprint(&page).as_deref(), Some(planned.as_str()));
    // A plan seen for another document (or a store that changed since): nothing written.
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "import"),
            ("plan", "0123"),
        ]))
        .await;
    assert!(
        page.body.contains("The plan changed since you saw it"),
        "{}",
        page.body
    );
    assert!(
        t.admin
            .feature(&t.caller, "shop", "imported")
            .await
            .is_err()
    );
    assert_eq!(
        t.admin.events(&t.caller, 0, 1000).await.unwrap().len(),
        events
    );
    // Import with the plan seen: imported, and the summary follows the plan.
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "import"),
            ("plan", &planned),
        ]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body
            .contains("1 created, 1 updated, 0 unchanged, 0 skipped"),
        "{}",
        page.body
    );
    let feature = t
        .admin
        .feature(&t.caller, "shop", "imported")
        .await
        .unwrap();
    let production = feature
        .environments
        .unwrap()
        .into_iter()
        .find(|e| e.name == "production")
        .unwrap();
    assert!(production.enabled);
    // Planned again: nothing to change; imported again: both unchanged, nothing written.
    let page = t
        .send(multipart(&[("document", &document), ("action", "plan")]))
        .await;
    assert!(page.body.contains("Nothing to change"), "{}", page.body);
    let again = fingerprint(&page).unwrap();
    let written = t.admin.events(&t.caller, 0, 1000).await.unwrap().len();
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "import"),
            ("plan", &again),
        ]))
        .await;
    assert!(
        page.body
            .contains("0 created, 0 updated, 2 unchanged, 0 skipped"),
        "{}",
        page.body
    );
    assert_eq!(
        t.admin.events(&t.caller, 0, 1000).await.unwrap().len(),
        written
    );
    // create-missing: the existing ones are skipped.
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "plan"),
            ("mode", "create-missing"),
        ]))
        .await;
    assert!(
        page.body
            .contains("0 to create, 0 to update, 0 unchanged, 2 skipped"),
        "{}",
        page.body
    );
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "plan"),
            ("mode", "merge"),
        ]))
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.body.contains("mode"), "{}", page.body);
    // Not JSON: said so, nothing written.
    let page = t
        .send(multipart(&[("document", "{ nope"), ("action", "import")]))
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.body.contains("not JSON"));
}

#[tokio::test]
async fn a_large_plan_stays_under_100_kb() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let token = t.get("/admin/import", Some(&cookie)).await.csrf();
    let features: Vec<_> = (0..2000)
        .map(|i| json!({ "name": format!("flag-{i:04}"), "type": "release", "description": "x".repeat(300) }))
        .collect();
    let document = json!({
        "features": features, "featureStrategies": [], "tagTypes": []
    })
    .to_string();
    let boundary = "XyZ";
    let mut body = String::new();
    for (name, value) in [
        ("csrf", token.as_str()),
        ("project", "shop"),
        ("environment", "production"),
        ("action", "plan"),
        ("document", ""),
    ] {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"flags.json\"\r\nContent-Type: application/json\r\n\r\n{document}\r\n--{boundary}--\r\n"
    ));
    let request = Request::builder()
        .method(Method::POST)
        .uri("/admin/import")
        .header(header::HOST, "localhost")
        .header(header::COOKIE, &cookie)
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap();
    let page = t.send(request).await;
    assert_eq!(
        page.status,
        StatusCode::OK,
        "{}",
        &page.body[..page.body.len().min(2000)]
    );
    assert!(
        page.body.contains("2000 to create"),
        "{}",
        &page.body[..2000]
    );
    assert!(
        page.body.contains("more features to create or update"),
        "the plan is summarised"
    );
    // Besides the document echoed into its textarea (the Import button sends it again), the
    // page, the plan included, stays small.
    let start = page.body.find("<textarea").unwrap();
    let end = page.body[start..].find("</textarea>").unwrap() + start;
    let without_document = page.body.len() - (end - start);
    assert!(
        without_document <= 100 * 1024,
        "{without_document} bytes besides the document"
    );
}
