SELECT name, "user id" FROM users WHERE id = 1 AND note = 'it''s fine'; -- done
