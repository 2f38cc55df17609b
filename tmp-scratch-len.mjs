import Database from 'better-sqlite3';
const db = new Database(':memory:');
console.log(db.prepare("select * from pragma_compile_options where compile_options like '%MAX%' or compile_options like '%TEMP%' or compile_options like '%MEMSTATUS%'").pluck().all());
for (const n of [5e8, 9e8]) { try { console.log(n, db.prepare(`select length(printf('%.*c', ${n}, 'x'))`).pluck().get()); } catch (e) { console.log(n, e.message); } }
