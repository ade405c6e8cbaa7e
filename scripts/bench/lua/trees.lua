-- Held-out benchmark: binary trees built, checked and dropped, and a
-- table-based binary search tree with insertions, lookups and an in-order walk.
local function make(d)
  if d == 0 then return { false, false } end
  d = d - 1
  return { make(d), make(d) }
end

local function check(t)
  if not t[1] then return 1 end
  return 1 + check(t[1]) + check(t[2])
end

local total = 0
for d = 4, 10, 2 do
  local iters = 1 << (10 - d + 2)
  local c = 0
  for _ = 1, iters do c = c + check(make(d)) end
  total = total + c
  print(string.format("depth %d: %d trees, %d nodes", d, iters, c))
end

local root
local function insert(k)
  local node = { key = k }
  if not root then root = node return end
  local n = root
  while true do
    if k < n.key then
      if n.left then n = n.left else n.left = node return end
    else
      if n.right then n = n.right else n.right = node return end
    end
  end
end
local x = 12345
for _ = 1, 3000 do
  x = (x * 1103515245 + 12345) % 2147483648
  insert(x % 100000)
end
local found = 0
for k = 0, 99999, 7 do
  local n = root
  while n and n.key ~= k do n = k < n.key and n.left or n.right end
  if n then found = found + 1 end
end
local sum, count = 0, 0
local function walk(n)
  if not n then return end
  walk(n.left); sum = sum + n.key; count = count + 1; walk(n.right)
end
walk(root)
print("total", total, "found", found, "walked", count, sum)
