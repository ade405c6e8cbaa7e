-- A small n-body simulation: floating-point loops over arrays of bodies
-- (a sun and four planets, units where G = 1), with energy printed before
-- and after.

local PI = 3.141592653589793
local SOLAR_MASS = 4 * PI * PI
local DAYS = 365.24

local function body(x, y, z, vx, vy, vz, mass)
  return { x = x, y = y, z = z, vx = vx * DAYS, vy = vy * DAYS, vz = vz * DAYS,
           mass = mass * SOLAR_MASS }
end

local bodies = {
  body(0, 0, 0, 0, 0, 0, 1),
  body(4.84, -1.16, -0.10, 0.00166, 0.00770, -0.0000690, 0.000954),
  body(8.34, 4.12, -0.40, -0.00277, 0.00500, 0.0000230, 0.000286),
  body(12.89, -15.11, -0.22, 0.00296, 0.00238, -0.0000297, 0.0000437),
  body(15.38, -25.92, 0.18, 0.00268, 0.00163, -0.0000951, 0.0000515),
}

local function offset_momentum(b)
  local px, py, pz = 0, 0, 0
  for i = 1, #b do
    local bi = b[i]
    px = px + bi.vx * bi.mass
    py = py + bi.vy * bi.mass
    pz = pz + bi.vz * bi.mass
  end
  b[1].vx = -px / SOLAR_MASS
  b[1].vy = -py / SOLAR_MASS
  b[1].vz = -pz / SOLAR_MASS
end

local function energy(b)
  local e = 0
  for i = 1, #b do
    local bi = b[i]
    e = e + 0.5 * bi.mass * (bi.vx * bi.vx + bi.vy * bi.vy + bi.vz * bi.vz)
    for j = i + 1, #b do
      local bj = b[j]
      local dx, dy, dz = bi.x - bj.x, bi.y - bj.y, bi.z - bj.z
      e = e - bi.mass * bj.mass / math.sqrt(dx * dx + dy * dy + dz * dz)
    end
  end
  return e
end

local function advance(b, dt)
  local n = #b
  for i = 1, n do
    local bi = b[i]
    local bix, biy, biz, bimass = bi.x, bi.y, bi.z, bi.mass
    local bivx, bivy, bivz = bi.vx, bi.vy, bi.vz
    for j = i + 1, n do
      local bj = b[j]
      local dx, dy, dz = bix - bj.x, biy - bj.y, biz - bj.z
      local d2 = dx * dx + dy * dy + dz * dz
      local mag = dt / (d2 * math.sqrt(d2))
      local bm = bj.mass * mag
      bivx = bivx - dx * bm
      bivy = bivy - dy * bm
      bivz = bivz - dz * bm
      bm = bimass * mag
      bj.vx = bj.vx + dx * bm
      bj.vy = bj.vy + dy * bm
      bj.vz = bj.vz + dz * bm
    end
    bi.vx, bi.vy, bi.vz = bivx, bivy, bivz
    bi.x = bix + dt * bivx
    bi.y = biy + dt * bivy
    bi.z = biz + dt * bivz
  end
end

offset_momentum(bodies)
print(string.format("energy before %.9f", energy(bodies)))
local steps = 20000
for s = 1, steps do
  advance(bodies, 0.01)
  if s % 5000 == 0 then
    print(string.format("step %5d energy %.9f", s, energy(bodies)))
  end
end
for i = 1, #bodies do
  local b = bodies[i]
  print(string.format("body %d at %.6f %.6f %.6f", i, b.x, b.y, b.z))
end
print(string.format("sqrt(2) %.15g  2^0.5 %.15g  floor(-3.5) %d  7 // 2.0 %.1f  fmod %.3f",
  math.sqrt(2), 2 ^ 0.5, math.floor(-3.5), 7 // 2.0, math.fmod(7.5, 2)))
