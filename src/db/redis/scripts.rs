//! The Lua scripts of the writes that must find their order: loaded at setup (Redis's
//! prepared statements), each one atomic.

/// Order and items in one round trip: {order hash, item hash, item hash, …}, or {}.
pub(super) const READ_ORDER: &str = r#"
local order = redis.call('HGETALL', KEYS[1])
if #order == 0 then return {} end
local out = {order}
for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local item = redis.call('HGETALL', 'hatshop:item:' .. id)
  if #item > 0 then
    item[#item + 1] = 'line_item_id'
    item[#item + 1] = id
    out[#out + 1] = item
  end
end
return out
"#;

/// ARGV: field, value, field, value, …; 1 if the order was there.
pub(super) const SET_IF_EXISTS: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"#;

/// ARGV: subtotal, then (item id, colour, size, quantity) per changed item.
pub(super) const UPDATE_ITEMS: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'subtotal_cents', ARGV[1])
for i = 2, #ARGV, 4 do
  local item = 'hatshop:item:' .. ARGV[i]
  if redis.call('EXISTS', item) == 1 then
    redis.call('HSET', item, 'colour', ARGV[i + 1], 'size', ARGV[i + 2], 'quantity', ARGV[i + 3])
  end
end
return 1
"#;

pub(super) const DELETE_ORDER: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  redis.call('DEL', 'hatshop:item:' .. id)
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
"#;
