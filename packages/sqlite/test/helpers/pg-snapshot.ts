// What a PostgreSQL database holds, as one string: its tables, every row of each, and the
// triggers and functions of its schemas — to show that entity-git wrote nothing there.
import pg from 'pg';

export async function pgSnapshot(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = (
      await client.query(
        `select table_schema, table_name from information_schema.tables
         where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`,
      )
    ).rows as { table_schema: string; table_name: string }[];
    const parts: unknown[] = [tables];
    for (const t of tables) {
      const name = `"${t.table_schema}"."${t.table_name}"`;
      const rows = (await client.query(`select * from ${name}`)).rows.map((r) => JSON.stringify(r)).sort();
      parts.push(name, rows);
    }
    parts.push((await client.query('select tgname from pg_trigger where not tgisinternal order by 1')).rows);
    parts.push(
      (
        await client.query(
          `select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
           where n.nspname not in ('pg_catalog', 'information_schema') order by 1`,
        )
      ).rows,
    );
    return JSON.stringify(parts);
  } finally {
    await client.end();
  }
}
