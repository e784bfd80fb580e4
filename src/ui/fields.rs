//! A posted form as its (name, value) pairs, in order: the pages' forms repeat names (one
//! checkbox per user, one row per variant), which a struct cannot hold.

use axum::Form;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// The fields of an `application/x-www-form-urlencoded` body.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields(pub Vec<(String, String)>);

impl Fields {
    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub(crate) fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl<S: Send + Sync> FromRequest<S> for Fields {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Form::<Vec<(String, String)>>::from_request(request, state).await {
            Ok(Form(pairs)) => Ok(Fields(pairs)),
            Err(rejection) => Err((
                StatusCode::BAD_REQUEST,
                format!("The form could not be read: {rejection}"),
            )
                .into_response()),
        }
    }
}
