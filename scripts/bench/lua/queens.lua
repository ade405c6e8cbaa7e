-- Held-out benchmark: backtracking and coroutines: N queens, permutations
-- from a coroutine generator, and a memoized knapsack over tables.
local function queens(n)
  local cols, d1, d2, count = {}, {}, {}, 0
  local function place(r)
    if r > n then count = count + 1 return end
    for c = 1, n do
      if not cols[c] and not d1[r + c] and not d2[r - c + n] then
        cols[c], d1[r + c], d2[r - c + n] = true, true, true
        place(r + 1)
        cols[c], d1[r + c], d2[r - c + n] = nil, nil, nil
      end
    end
  end
  place(1)
  return count
end
for n = 4, 8 do print("queens", n, queens(n)) end

local function permgen(a, n)
  n = n or #a
  if n <= 1 then coroutine.yield(a) else
    for i = 1, n do
      a[n], a[i] = a[i], a[n]
      permgen(a, n - 1)
      a[n], a[i] = a[i], a[n]
    end
  end
end
local cnt, chk = 0, 0
for p in coroutine.wrap(function() permgen({ 1, 2, 3, 4, 5, 6, 7 }) end) do
  cnt = cnt + 1; chk = (chk + p[1] * p[7]) % 1000003
end
print("perms", cnt, chk)

local wts, vals = {}, {}
for i = 1, 40 do wts[i] = (i * 7) % 23 + 1; vals[i] = (i * 13) % 37 + 1 end
local memo = {}
local function best(i, cap)
  if i > #wts then return 0 end
  local key = i * 1000 + cap
  local m = memo[key]
  if m then return m end
  local r = best(i + 1, cap)
  if wts[i] <= cap then r = math.max(r, vals[i] + best(i + 1, cap - wts[i])) end
  memo[key] = r
  return r
end
print("knapsack", best(1, 200))
