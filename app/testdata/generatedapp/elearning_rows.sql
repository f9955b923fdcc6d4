-- Rows for the tables fixtureSQL builds from the fields of AWS's elearning design
-- (draft/testdata/mcp/valid/elearning_schema.json): 2 tenants, 3 users and 2 courses
-- each, 12 lessons a course (lesson_order 10 sorts before 9 as text), enrollments,
-- certificates of the completed ones, progress; optional fields NULL in some rows.
INSERT INTO tenant_organizations SELECT 't' || t, 'Org ' || t, 'org' || t || '.example', 'pro', 100, 20, 'admin@org' || t || '.example', 1700000000 + t, 'active'
  FROM generate_series(1, 2) t;
INSERT INTO tenant_users SELECT 't' || t, 'u' || u, 'u' || u || '@org' || t || '.example', 'First' || u, 'Last' || u, 'learner',
  CASE WHEN u % 2 = 0 THEN 'sales' END, NULL, 1700000100 + u, CASE WHEN u % 3 > 0 THEN 1700009000 + u END, 'active'
  FROM generate_series(1, 2) t, generate_series(1, 3) u;
INSERT INTO tenant_courses SELECT 't' || t, 'c' || c, 'Course ' || c, 'About ' || c, 'i' || c, 'Instructor ' || c, 'dev', 'easy', 3 * c,
  CASE WHEN c = 1 THEN 50 END, CASE WHEN c = 2 THEN ARRAY['c1'] END, ARRAY['go', 'sql'], 1700000200 + c, 1700000300 + c, 'published'
  FROM generate_series(1, 2) t, generate_series(1, 2) c;
INSERT INTO tenant_lessons SELECT 't' || t, 'c' || c, 'l' || l, l, 'Lesson ' || l, 'Lesson ' || l || ' of ' || c, 'video',
  CASE WHEN l % 2 = 0 THEN 'https://cdn.example/' || l END, 10 + l, l % 3 = 0, l % 4 = 0, CASE WHEN l % 4 = 0 THEN 70 END, 1700000400 + l, 1700000500 + l
  FROM generate_series(1, 2) t, generate_series(1, 2) c, generate_series(1, 12) l;
INSERT INTO tenant_enrollments SELECT 't' || t, 'u' || u, 'c' || c, 'Course ' || c, 'Instructor ' || c, 1700001000 + 100 * u + c,
  CASE WHEN u = 1 THEN 1700005000 + c END, CASE WHEN u = 1 THEN 100 ELSE 10 * u END, CASE WHEN u > 1 THEN 'l' || u END, NULL, u = 1, 'active'
  FROM generate_series(1, 2) t, generate_series(1, 3) u, generate_series(1, 2) c;
INSERT INTO tenant_certificates SELECT e.tenant_id, e.user_id, e.course_id, 'cert-' || e.tenant_id || e.user_id || e.course_id, e.course_title,
  'First1', e.instructor_name, e.completion_date + 7, e.completion_date, 'A', NULL, 'v-' || e.course_id, NULL, 'issued'
  FROM tenant_enrollments e WHERE e.completion_date IS NOT NULL;
INSERT INTO tenant_progresses SELECT 't' || t, 'u' || u, 'c1', 'l' || l, 1700002000 + a * 9 + l, 'done', 5 * a,
  CASE WHEN l % 4 = 0 THEN 60 + a END, CASE WHEN l % 4 = 0 THEN a > 1 END, NULL, 1700003000 + l
  FROM generate_series(1, 2) t, generate_series(1, 3) u, generate_series(1, 11) l, generate_series(1, 2) a;
