-- Recursion and integer arithmetic: naive, memoized and iterative
-- Fibonacci, the Ackermann function and a recursive Collatz walk.

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local memo = {}
local function mfib(n)
  if n < 2 then return n end
  local v = memo[n]
  if v then return v end
  v = mfib(n - 1) + mfib(n - 2)
  memo[n] = v
  return v
end

local function ifib(n)
  local a, b = 0, 1
  for _ = 1, n do a, b = b, a + b end
  return a
end

local function ack(m, n)
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end

local function collatz(n, steps)
  if n == 1 then return steps end
  if n % 2 == 0 then return collatz(n // 2, steps + 1) end
  return collatz(3 * n + 1, steps + 1)
end

for n = 0, 24, 4 do
  print(string.format("fib(%d) = %d", n, fib(n)))
end
print("fib(27) = " .. fib(27))
print("mfib(90) = " .. mfib(90))
print("ifib(92) = " .. ifib(92))
-- integers wrap around modulo 2^64 in Lua 5.4
print("ifib(100) wraps to " .. ifib(100))
print("ack(2, 3) = " .. ack(2, 3))
print("ack(3, 5) = " .. ack(3, 5))

local best, bestn = 0, 0
for n = 1, 30000 do
  local s = collatz(n, 0)
  if s > best then best, bestn = s, n end
end
print(string.format("longest Collatz chain below 30000: %d (%d steps)", bestn, best))
