'use strict';
// A store URL fit to show: its password replaced by '***', so that a Store
// printed, logged or serialized never carries the credential.
//   'redis://user:secret@host:6379' -> 'redis://user:***@host:6379'
//   'redis://secret@host'           -> 'redis://***@host' (a lone credential is a password)
// The credentials are what precedes the last '@' before the query, as librl
// reads them; anything in doubt is hidden rather than shown.

function redactUrl(url) {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd < 0) return url;
  const authority = schemeEnd + 3;
  const query = url.indexOf('?', authority);
  const at = url.lastIndexOf('@', (query < 0 ? url.length : query) - 1);
  if (at < authority) return url;
  const userinfo = url.slice(authority, at);
  const colon = userinfo.indexOf(':');
  const user = colon < 0 ? '' : userinfo.slice(0, colon + 1);
  return `${url.slice(0, authority)}${user}***${url.slice(at)}`;
}

module.exports = { redactUrl };
