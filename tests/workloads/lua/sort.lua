-- table.sort on integers, floats, strings and records with custom
-- comparators; insertion and binary search by hand.

local seed = 42
local function lcg()
  seed = (seed * 6364136223846793005 + 1442695040888963407) -- wraps mod 2^64
  return (seed >> 33)
end

local N = 30000
local ints = {}
for i = 1, N do ints[i] = lcg() % 1000000 end
table.sort(ints)
local ok = true
for i = 2, N do if ints[i - 1] > ints[i] then ok = false end end
print("ints sorted", ok, ints[1], ints[N // 2], ints[N])

local floats = {}
for i = 1, N do floats[i] = (lcg() % 100000) / 997.0 end
table.sort(floats, function(a, b) return a > b end)
print(string.format("floats desc %.6f %.6f %.6f", floats[1], floats[N // 2], floats[N]))

local strs = {}
for i = 1, 5000 do strs[i] = string.format("k%07d", lcg() % 10000000) end
table.sort(strs)
print("strings", strs[1], strs[2500], strs[5000])

local recs = {}
for i = 1, 8000 do
  recs[i] = { id = i, group = lcg() % 13, score = lcg() % 1000 }
end
table.sort(recs, function(a, b)
  if a.group ~= b.group then return a.group < b.group end
  if a.score ~= b.score then return a.score > b.score end
  return a.id < b.id
end)
local h = 0
for i = 1, #recs do h = (h * 131 + recs[i].id) % 4294967291 end
print("records", recs[1].group, recs[1].score, recs[1].id, "hash", h)

-- insertion sort by hand on a small array
local small = {}
for i = 1, 600 do small[i] = lcg() % 5000 end
for i = 2, #small do
  local v, j = small[i], i - 1
  while j >= 1 and small[j] > v do small[j + 1] = small[j]; j = j - 1 end
  small[j + 1] = v
end
local function bsearch(t, x)
  local lo, hi = 1, #t
  while lo <= hi do
    local mid = (lo + hi) // 2
    if t[mid] < x then lo = mid + 1 elseif t[mid] > x then hi = mid - 1 else return mid end
  end
  return nil
end
local found = 0
for x = 0, 4999, 7 do if bsearch(small, x) then found = found + 1 end end
print("insertion sort", small[1], small[300], small[600], "found", found)

-- math.random with a fixed seed is deterministic in Lua 5.4
math.randomseed(2024)
local r = {}
for i = 1, 5 do r[i] = math.random(1, 1000) end
print("random", table.concat(r, " "))
