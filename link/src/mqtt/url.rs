//! A broker's address and login, and the client options built from it.

use std::fmt;
use std::time::Duration;

use rumqttc::MqttOptions;

use super::error::MqttError;

/// MQTT keep-alive: a dead connection is noticed within about this.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// Capacity of a client's request queue. A publish that finds it full (a long outage) is
/// dropped: the learner's [`WireClient`](crate::client::WireClient) resends.
pub(super) const REQUEST_QUEUE: usize = 256;

/// Username and password from the environment when the URL has none.
const USERNAME_VAR: &str = "LDP_MQTT_USERNAME";
/// See [`USERNAME_VAR`].
const PASSWORD_VAR: &str = "LDP_MQTT_PASSWORD";

/// A broker's address and login: `mqtt://[USER[:PASS]@]HOST[:PORT]` (port 1883 by default;
/// `mqtts://`, port 8883, with the `mqtt-tls` feature). Without a user in the URL, the login
/// comes from the environment variables `LDP_MQTT_USERNAME` and `LDP_MQTT_PASSWORD`, if set.
/// The user and password are taken literally (no percent-decoding).
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerUrl {
    /// Host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// TLS (`mqtts://`).
    pub tls: bool,
    username: Option<String>,
    password: Option<String>,
}

impl BrokerUrl {
    /// Reads `url`.
    ///
    /// ```
    /// use ldp_link::mqtt::BrokerUrl;
    /// let url = BrokerUrl::parse("mqtt://127.0.0.1:1883")?;
    /// assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 1883));
    /// assert!(BrokerUrl::parse("http://example.org").is_err());
    /// # Ok::<(), ldp_link::mqtt::MqttError>(())
    /// ```
    pub fn parse(url: &str) -> Result<Self, MqttError> {
        let bad = |reason| MqttError::Url { url: redact(url), reason };
        let (tls, rest) = if let Some(rest) = url.strip_prefix("mqtt://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("mqtts://") {
            if !cfg!(feature = "mqtt-tls") {
                return Err(MqttError::TlsUnsupported);
            }
            (true, rest)
        } else {
            return Err(bad("it must start with mqtt://"));
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#']) {
            return Err(bad("a broker URL has no path, query or fragment"));
        }
        let (userinfo, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(u) => match u.split_once(':') {
                Some((user, pass)) => (Some(user.to_string()), Some(pass.to_string())),
                None => (Some(u.to_string()), None),
            },
        };
        if username.as_deref() == Some("") {
            return Err(bad("the user name before @ is empty"));
        }
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (host, after) =
                v6.split_once(']').ok_or_else(|| bad("an IPv6 address lacks its closing ]"))?;
            (host, after.strip_prefix(':').map(Some).unwrap_or((!after.is_empty()).then_some("")))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() {
            return Err(bad("the host is empty"));
        }
        let port = match port {
            None => {
                if tls {
                    8883
                } else {
                    1883
                }
            }
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return Err(bad("the port must be a number from 1 to 65535")),
            },
        };
        Ok(Self { host: host.to_string(), port, tls, username, password })
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The login: the URL's, else the environment's (type docs), else none.
    pub fn credentials(&self) -> Option<(String, String)> {
        match &self.username {
            Some(user) => Some((user.clone(), self.password.clone().unwrap_or_default())),
            None => {
                let user = std::env::var(USERNAME_VAR).ok().filter(|u| !u.is_empty())?;
                Some((user, std::env::var(PASSWORD_VAR).unwrap_or_default()))
            }
        }
    }

    /// `mqtt://127.0.0.1:<port>`, no TLS, no login (a private broker's, [`super::Broker`]).
    pub(super) fn loopback(port: u16) -> Self {
        Self { host: "127.0.0.1".into(), port, tls: false, username: None, password: None }
    }

    /// Client options for a client named `client_id`.
    pub(super) fn options(&self, client_id: String) -> MqttOptions {
        let mut options = MqttOptions::new(client_id, self.host.clone(), self.port);
        options
            .set_keep_alive(KEEP_ALIVE)
            .set_clean_session(true)
            .set_request_channel_capacity(REQUEST_QUEUE);
        if let Some((user, pass)) = self.credentials() {
            options.set_credentials(user, pass);
        }
        #[cfg(feature = "mqtt-tls")]
        if self.tls {
            options.set_transport(rumqttc::Transport::tls_with_default_config());
        }
        options
    }
}

/// The URL without its password.
impl fmt::Display for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        match &self.username {
            Some(user) => write!(f, "{scheme}://{user}@{}", self.address()),
            None => write!(f, "{scheme}://{}", self.address()),
        }
    }
}

/// As [`Display`](fmt::Display): never the password.
impl fmt::Debug for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BrokerUrl({self})")
    }
}

/// `url` with any password replaced by `***` (for error messages).
fn redact(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(_)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => {
                let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
                format!("{scheme}://{user}:***@{host}")
            }
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_bad_ones_say_why() {
        let u = BrokerUrl::parse("mqtt://alice:s3cret@broker.example:1884").expect("parses");
        assert_eq!((u.host.as_str(), u.port, u.tls), ("broker.example", 1884, false));
        assert_eq!(u.credentials(), Some(("alice".into(), "s3cret".into())));
        assert!(!format!("{u} {u:?}").contains("s3cret"));
        assert_eq!(BrokerUrl::parse("mqtt://localhost").expect("default port").port, 1883);
        assert_eq!(BrokerUrl::parse("mqtt://[::1]:1885").expect("v6").address(), "[::1]:1885");
        for bad in [
            "tcp://x:1",
            "mqtt://",
            "mqtt://:1883",
            "mqtt://h:0",
            "mqtt://h:x",
            "mqtt://h:1/path",
            "mqtt://@h",
        ] {
            let e = BrokerUrl::parse(bad).expect_err(bad);
            assert!(e.to_string().contains("mqtt://"), "{bad}: {e}");
        }
        let e = BrokerUrl::parse("ftp://bob:pw@h").expect_err("scheme");
        assert!(!e.to_string().contains("pw"), "{e}");
        if !cfg!(feature = "mqtt-tls") {
            assert!(matches!(BrokerUrl::parse("mqtts://h:8883"), Err(MqttError::TlsUnsupported)));
        }
    }
}
