//! [`RedisStateStore`]: per-principal state in Redis, one hash per
//! principal, every operation one Lua script (so atomic across replicas).
//!
//! The hash `{prefix}state:{p}` (`p`: 32 hex digits of the SHA-256 of the
//! principal) holds, for each entry `e` (its kind and id, length-prefixed):
//! `d<e>` its bytes and `m<e>` its metadata, `version|touched_ms|bytes`,
//! or `x|expired_ms` once it expired (kept [`EXPIRED_KEPT`] to say
//! "expired", then dropped). Idle time is measured on the Redis server's
//! clock (`TIME`), the same for every replica. The hash itself expires
//! after the idle TTL plus [`EXPIRED_KEPT`] without any use.

use async_trait::async_trait;
use redis::Script;
use sha2::{Digest, Sha256};

use super::RedisBackend;
use crate::storage::{
    StateKey, StateLimits, StateLookup, StateStore, StateStoreError, StateWrite, EXPIRED_KEPT,
};

/// Reads an entry and restarts its idle time, or expires it.
/// KEYS: hash. ARGV: entry, ttl ms, kept ms.
/// Returns `{'found', version, bytes}`, `{'expired'}` or `{'missing'}`.
const LOAD: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
local kept = tonumber(ARGV[3])
local mf = 'm' .. ARGV[1]
local m = redis.call('HGET', KEYS[1], mf)
if not m then return {'missing'} end
local v, touched, size = string.match(m, '^(%d+)|(%d+)|(%d+)$')
if not v then
  local at = tonumber(string.match(m, '^x|(%d+)$') or '0')
  if now - at > kept then
    redis.call('HDEL', KEYS[1], mf)
    return {'missing'}
  end
  return {'expired'}
end
if now - tonumber(touched) > ttl then
  redis.call('HSET', KEYS[1], mf, 'x|' .. string.format('%d', now))
  redis.call('HDEL', KEYS[1], 'd' .. ARGV[1])
  return {'expired'}
end
redis.call('HSET', KEYS[1], mf, v .. '|' .. string.format('%d', now) .. '|' .. size)
redis.call('PEXPIRE', KEYS[1], ttl + kept)
return {'found', v, redis.call('HGET', KEYS[1], 'd' .. ARGV[1])}
";

/// Writes an entry if its version is still the one read, within the
/// principal's cap; sweeps the principal's entries on the way (expires
/// idle ones, drops old tombstones, sums the live bytes).
/// KEYS: hash. ARGV: entry, expected version ('' to create), bytes,
/// ttl ms, kept ms, cap, charged size.
/// Returns `{'written', version}`, `{'conflict'}`, `{'over', used}`,
/// `{'expired'}` or `{'missing'}`.
const WRITE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[4])
local kept = tonumber(ARGV[5])
local mine = 'm' .. ARGV[1]
local used = 0
local cur = nil
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local f = all[i]
  if string.sub(f, 1, 1) == 'm' then
    local v, touched, size = string.match(all[i + 1], '^(%d+)|(%d+)|(%d+)$')
    if v then
      if now - tonumber(touched) > ttl then
        redis.call('HSET', KEYS[1], f, 'x|' .. string.format('%d', now))
        redis.call('HDEL', KEYS[1], 'd' .. string.sub(f, 2))
        if f == mine then cur = 'x' end
      elseif f == mine then
        cur = v
      else
        used = used + tonumber(size)
      end
    else
      local at = tonumber(string.match(all[i + 1], '^x|(%d+)$') or '0')
      if now - at > kept then
        redis.call('HDEL', KEYS[1], f)
      elseif f == mine then
        cur = 'x'
      end
    end
  end
end
if ARGV[2] == '' then
  if cur ~= nil and cur ~= 'x' then return {'conflict'} end
else
  if cur == nil then return {'missing'} end
  if cur == 'x' then return {'expired'} end
  if cur ~= ARGV[2] then return {'conflict'} end
end
local size = tonumber(ARGV[7])
if used + size > tonumber(ARGV[6]) then return {'over', string.format('%d', used)} end
local nv = 1
if ARGV[2] ~= '' then nv = tonumber(ARGV[2]) + 1 end
local meta = string.format('%d', nv) .. '|' .. string.format('%d', now) .. '|' .. string.format('%d', size)
redis.call('HSET', KEYS[1], mine, meta, 'd' .. ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl + kept)
return {'written', string.format('%d', nv)}
";

/// Removes an entry. KEYS: hash. ARGV: entry. Returns 1 when it was live.
const REMOVE: &str = r"
local m = redis.call('HGET', KEYS[1], 'm' .. ARGV[1])
redis.call('HDEL', KEYS[1], 'm' .. ARGV[1], 'd' .. ARGV[1])
if m and string.sub(m, 1, 2) ~= 'x|' then return 1 end
return 0
";

/// Per-principal state in Redis, shared by every replica given the same
/// [`RedisBackend`] (URL and prefix): a handle minted through one replica
/// is served by any other (given the same
/// [`request_state_keys`](crate::McpServerBuilder::request_state_keys)),
/// and two replicas updating one entry at once lose no update (each write
/// is a compare-and-set on the entry's version, in one script).
#[derive(Clone)]
pub struct RedisStateStore {
    redis: RedisBackend,
    load: Script,
    write: Script,
    remove: Script,
}

impl std::fmt::Debug for RedisStateStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStateStore")
            .field("redis", &self.redis)
            .finish_non_exhaustive()
    }
}

impl RedisStateStore {
    /// A state store on `redis`.
    pub fn new(redis: RedisBackend) -> Self {
        Self {
            redis,
            load: Script::new(LOAD),
            write: Script::new(WRITE),
            remove: Script::new(REMOVE),
        }
    }

    /// The hash of `principal`.
    fn hash(&self, principal: &str) -> String {
        let digest = Sha256::digest(principal.as_bytes());
        let mut hex = String::with_capacity(32);
        for b in &digest[..16] {
            hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            hex.push(char::from(b"0123456789abcdef"[usize::from(b & 0xf)]));
        }
        self.redis.key("state:", &hex)
    }
}

/// The field suffix of an entry: its kind, length-prefixed, and its id.
fn entry(key: &StateKey) -> String {
    format!("{}:{}:{}", key.kind.len(), key.kind, key.id)
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn failed(e: &redis::RedisError) -> StateStoreError {
    StateStoreError(e.to_string())
}

fn number(reply: &[Vec<u8>], i: usize) -> Result<u64, StateStoreError> {
    reply
        .get(i)
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| StateStoreError("malformed reply from the state script".into()))
}

#[async_trait]
impl StateStore for RedisStateStore {
    async fn load(
        &self,
        key: &StateKey,
        limits: &StateLimits,
    ) -> Result<StateLookup, StateStoreError> {
        let mut conn = self.redis.connection();
        let mut reply: Vec<Vec<u8>> = self
            .load
            .key(self.hash(&key.principal))
            .arg(entry(key))
            .arg(ms(limits.idle_ttl))
            .arg(ms(EXPIRED_KEPT))
            .invoke_async(&mut conn)
            .await
            .map_err(|e| failed(&e))?;
        match reply.first().map(Vec::as_slice) {
            Some(b"found") => {
                let version = number(&reply, 1)?;
                let value = reply.pop().filter(|_| reply.len() == 2).unwrap_or_default();
                Ok(StateLookup::Found { version, value })
            }
            Some(b"expired") => Ok(StateLookup::Expired),
            _ => Ok(StateLookup::Missing),
        }
    }

    async fn write(
        &self,
        key: &StateKey,
        expected: Option<u64>,
        value: Vec<u8>,
        limits: &StateLimits,
    ) -> Result<StateWrite, StateStoreError> {
        let charged = key.charged(value.len());
        let mut conn = self.redis.connection();
        let reply: Vec<Vec<u8>> = self
            .write
            .key(self.hash(&key.principal))
            .arg(entry(key))
            .arg(expected.map(|v| v.to_string()).unwrap_or_default())
            .arg(value)
            .arg(ms(limits.idle_ttl))
            .arg(ms(EXPIRED_KEPT))
            .arg(limits.max_bytes_per_principal)
            .arg(charged)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| failed(&e))?;
        Ok(match reply.first().map(Vec::as_slice) {
            Some(b"written") => StateWrite::Written {
                version: number(&reply, 1)?,
            },
            Some(b"conflict") => StateWrite::Conflict,
            Some(b"over") => StateWrite::OverCap {
                used: usize::try_from(number(&reply, 1)?).unwrap_or(usize::MAX),
                cap: limits.max_bytes_per_principal,
            },
            Some(b"expired") => StateWrite::Expired,
            Some(b"missing") => StateWrite::Missing,
            _ => {
                return Err(StateStoreError(
                    "malformed reply from the state script".into(),
                ))
            }
        })
    }

    async fn remove(&self, key: &StateKey) -> Result<bool, StateStoreError> {
        let mut conn = self.redis.connection();
        let removed: i64 = self
            .remove
            .key(self.hash(&key.principal))
            .arg(entry(key))
            .invoke_async(&mut conn)
            .await
            .map_err(|e| failed(&e))?;
        Ok(removed == 1)
    }
}
